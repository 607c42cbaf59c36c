/**
 * What a generated client is named after and what its reader sees: one operation id and one
 * description per route (keyed `METHOD /koa/path`), and a description per tag. Kept beside the
 * document builder rather than in each route file, so the names read as one API: verbs `list`, `get`,
 * `create`, `update`, `delete` and a noun; the dashboard twin of an API-key route takes `Dashboard`.
 * api/openapi/openapi.test.ts fails when a mounted route has no entry here or two share an id.
 */
export interface OperationNaming {
  operationId: string;
  description: string;
}

const DASHBOARD_TWIN =
  'The dashboard twin of the API-key route of the same name: same body and answers, merchant token instead of the `sk_` key.';

export const OPERATIONS: Record<string, OperationNaming> = {
  // Health
  'GET /health': {
    operationId: 'getHealth',
    description:
      'Liveness: answers 200 with the running revision while the process serves requests. Touches no dependency.',
  },
  'GET /ready': {
    operationId: 'getReadiness',
    description:
      'Readiness: 200 when Postgres, Temporal and the signer each answered within the deadline, else 503 naming the one that did not.',
  },
  'GET /metrics': {
    operationId: 'getMetrics',
    description:
      'Prometheus metrics in the text exposition format; needs the metrics token when one is configured.',
  },
  'GET /openapi.json': {
    operationId: 'getOpenApiDocument',
    description:
      'This full contract: every route, including merchant login, the dashboard, webhooks and paymaster management.',
  },
  'GET /openapi/integrator.json': {
    operationId: 'getIntegratorOpenApiDocument',
    description:
      'The integrator contract: health, payment sessions, the paymaster JSON-RPC and the bundler proxy, and the webhook events.',
  },

  // Login
  'GET /v1/auth/login-payload': {
    operationId: 'getLoginPayload',
    description:
      'Starts a Sign-In with Ethereum login: a one-time payload and the exact message the wallet signs. Rate limited per client IP.',
  },
  'POST /v1/auth/verify': {
    operationId: 'verifyLogin',
    description:
      'Checks the signed login payload and returns a merchant token (JWT); the first login of a wallet creates its merchant. Rate limited per client IP.',
  },
  'POST /v1/auth/logout': {
    operationId: 'logout',
    description:
      'Revokes the merchant token used for this request: from now on it answers 401 on every route.',
  },
  'POST /v1/auth/email/start': {
    operationId: 'startEmailLogin',
    description:
      'Mails a 6-digit login code to a verified merchant e-mail; the answer is the same for an unknown address. Rate limited per client IP and per address.',
  },
  'POST /v1/auth/email/verify': {
    operationId: 'verifyEmailLogin',
    description: 'Exchanges an e-mailed login code for a merchant token (JWT). Rate limited per client IP.',
  },
  'POST /v1/auth/sign-in-code': {
    operationId: 'exchangeSignInCode',
    description:
      'Exchanges the one-time code of a dashboard sign-in link (the dev stack issues them; no route does) for a merchant token (JWT): once, within a minute of issue.',
  },

  // Merchant account
  'GET /v1/merchants/me': {
    operationId: 'getMerchant',
    description: 'The signed-in merchant: wallet, name, e-mail and whether it is verified, payout address.',
  },
  'PATCH /v1/merchants/me': {
    operationId: 'updateMerchant',
    description:
      'Changes the name, e-mail or payout address; a new e-mail is unverified until its mailed code is confirmed.',
  },
  'GET /v1/merchants/me/smart-accounts': {
    operationId: 'listSmartAccounts',
    description:
      'The smart accounts registered as the merchant’s, oldest first: checksummed address and when it was registered.',
  },
  'POST /v1/merchants/me/smart-accounts': {
    operationId: 'registerSmartAccount',
    description:
      'Registers a smart account as the merchant’s, proven by its signature; registering it again is a no-op, another merchant’s answers 409.',
  },
  'POST /v1/merchants/me/email/verify': {
    operationId: 'verifyMerchantEmail',
    description:
      'Confirms the profile e-mail with the code mailed to it; a verified e-mail can then sign in by code.',
  },
  'GET /v1/merchants/me/api-keys': {
    operationId: 'listApiKeys',
    description:
      'The merchant’s secret API keys: label, prefix and last use. The raw key is never shown again.',
  },
  'POST /v1/merchants/me/api-keys': {
    operationId: 'createApiKey',
    description:
      'Creates a secret API key (`sk_...`); the raw key is in this answer only, and only its hash is stored.',
  },
  'DELETE /v1/merchants/me/api-keys/{id}': {
    operationId: 'revokeApiKey',
    description: 'Revokes an API key: it stops authenticating at once. Revoking it again answers the same.',
  },

  // Payment sessions
  'POST /v1/sessions': {
    operationId: 'createSession',
    description:
      'Creates a payment session (an invoice): send the customer to its `paymentUrl`. Send an `Idempotency-Key` to make a retry safe: a repeat with the same key and body answers the first answer again, with another body 409.',
  },
  'GET /v1/sessions/export': {
    operationId: 'exportSessions',
    description:
      'The payments export: the merchant’s sessions created in a UTC date range (both ends included, at most 366 days) as CSV, one row per session with its received, settled and staked amounts and its transactions, oldest first, streamed. `format` is `csv` (the default).',
  },
  'GET /v1/sessions/{id}': {
    operationId: 'getSession',
    description:
      'Public read of a session with its payment options and line items; needs no credential (the id is the capability). Rate limited per client IP.',
  },
  'GET /v1/sessions/{id}/status': {
    operationId: 'getSessionStatus',
    description:
      'The session status view the checkout page polls: status, deposit, and whether the webhook was delivered. Rate limited per client IP.',
  },
  'GET /v1/merchants/me/sessions': {
    operationId: 'listSessions',
    description:
      'The merchant’s sessions, newest first, page by page; a status filter honours expiry computed on read.',
  },
  'POST /v1/merchants/me/sessions': {
    operationId: 'createDashboardSession',
    description: `${DASHBOARD_TWIN} Honours \`Idempotency-Key\` like createSession.`,
  },
  'GET /v1/merchants/me/sessions/export': {
    operationId: 'exportMerchantSessions',
    description:
      'The payments export for the dashboard: the same CSV as GET /v1/sessions/export, with the merchant token.',
  },
  'GET /v1/merchants/me/sessions/{id}': {
    operationId: 'getMerchantSession',
    description: 'One of the merchant’s sessions; another merchant’s answers 404.',
  },
  'GET /v1/merchants/me/sessions/{id}/events': {
    operationId: 'listSessionEvents',
    description:
      'The session’s events (`session.*`), oldest first, each with its webhook deliveries to the merchant’s endpoints (newest first, at most 20, with every attempt) and how many there are; another merchant’s session answers 404.',
  },
  'POST /v1/merchants/me/sessions/{id}/retry-forwarder': {
    operationId: 'retryForwarder',
    description:
      'Re-runs the on-chain settlement of a failed session, or settles funds that arrived after expiry; 409 while its workflow still runs.',
  },

  // Webhooks (API key)
  'POST /v1/webhooks': {
    operationId: 'createWebhookEndpoint',
    description:
      'Adds a webhook endpoint (at most 5) and the event types it receives; its `whsec_` signing secret is in this answer only.',
  },
  'GET /v1/webhooks': {
    operationId: 'listWebhookEndpoints',
    description: 'The merchant’s webhook endpoints, oldest first, without their secrets.',
  },
  'GET /v1/webhooks/{id}': {
    operationId: 'getWebhookEndpoint',
    description: 'One webhook endpoint, without its secret.',
  },
  'PATCH /v1/webhooks/{id}': {
    operationId: 'updateWebhookEndpoint',
    description:
      'Changes an endpoint’s url, events, enabled flag or description; pending retries use the new values.',
  },
  'DELETE /v1/webhooks/{id}': {
    operationId: 'deleteWebhookEndpoint',
    description: 'Deletes an endpoint and its delivery history; its pending retries stop.',
  },
  'POST /v1/webhooks/{id}/rotate-secret': {
    operationId: 'rotateWebhookSecret',
    description:
      'Replaces the endpoint’s signing secret; the new one is in this answer only. During the overlap each delivery carries two `v1=` signatures, one per secret.',
  },
  'GET /v1/webhooks/{id}/deliveries': {
    operationId: 'listWebhookDeliveries',
    description:
      'Deliveries to one endpoint, newest first: event id and type, status, every attempt with its HTTP status and duration, and the next attempt’s time.',
  },
  'POST /v1/webhooks/{id}/deliveries/{deliveryId}/resend': {
    operationId: 'resendWebhookDelivery',
    description:
      'Sends a delivery’s event again (same `evt_` id, fresh signature) as a new delivery with the full retry schedule. Limited per endpoint per hour (429 with Retry-After).',
  },
  'POST /v1/webhooks/{id}/recover': {
    operationId: 'recoverWebhookDeliveries',
    description:
      'Sends again every event whose deliveries to this endpoint all failed since a time (at most 14 days back). Limited per endpoint per hour.',
  },
  'POST /v1/webhooks/{id}/send-test-event': {
    operationId: 'sendWebhookTestEvent',
    description:
      'Sends the endpoint a signed `endpoint.test` event with a fixed body, whatever event types it lists: delivered and recorded like any event (it appears among the endpoint’s deliveries), never counted toward disabling the endpoint. 409 while the endpoint is disabled; shares the endpoint’s hourly limit with resends and recoveries (429 with Retry-After).',
  },
  'POST /v1/sessions/{id}/retry-webhook': {
    operationId: 'retrySessionWebhook',
    description:
      'Re-sends the session’s most recent event to every enabled endpoint; 409 before the session has an event. Limited per session per hour.',
  },

  // Refunds (API key, docs/service-contract.md "Refunds")
  'POST /v1/sessions/{id}/refunds': {
    operationId: 'createRefund',
    description:
      'Refunds a session: `amount` (decimal USD, default all that is refundable) never above what it received less its live refunds. With `address` the refund waits for its payment; without, `claimUrl` (shown once) lets the payer give the address. `source` says who pays: the forwarder (funds not swept) or the merchant (funds settled). Honours Idempotency-Key.',
  },
  'GET /v1/sessions/{id}/refunds': {
    operationId: 'listRefunds',
    description: 'The session’s refunds, newest first.',
  },
  'GET /v1/sessions/{id}/refunds/{refundId}': { operationId: 'getRefund', description: 'One refund.' },
  'POST /v1/sessions/{id}/refunds/{refundId}/cancel': {
    operationId: 'cancelRefund',
    description:
      'Cancels a refund while nothing has moved (awaiting its address, authorization or payment); its amount is refundable again. 409 once it is processing or finished.',
  },

  'POST /v1/sessions/{id}/refunds/{refundId}/transaction': {
    operationId: 'reportRefundTransaction',
    description:
      'Reports the transaction that sent a merchant-paid refund’s prepared `transfer`. It is read from the refund’s chain, never taken on trust: the receipt must hold a Transfer of exactly that token, to that address, of that amount, and no other refund may name it. The refund is `processing` until the chain’s confirmations, then `succeeded` (`refund.succeeded`).',
  },

  'POST /v1/sessions/{id}/refunds/{refundId}/authorize': {
    operationId: 'authorizeRefund',
    description:
      'Authorizes a forwarder refund (`source` `forwarder`, status `awaiting_authorization`): `signature` is the payout address’s `eth_signTypedData_v4` signature of the refund’s `authorization.typedData` (ECDSA, or accepted by its ERC-1271 contract). It is checked as the forwarder checks it before anything is stored (400 `signature` otherwise, nothing moved); the refund becomes `processing`, the operator relays it from the forwarder and pays the gas, and it is `succeeded` (`refund.succeeded`) once confirmed. 409 when it is not awaiting its authorization, a sweep of the forwarder is in flight, or the forwarder no longer holds the amount.',
  },
  'GET /refund/{token}': {
    operationId: 'getRefundClaimPage',
    description:
      'The refund claim page (HTML) a payer opens from `claimUrl`: the refund, a network chooser and an address field, submitted once to `POST /v1/refund-claims/{token}`. Same CSP as the checkout page.',
  },
  'GET /v1/refund-claims/{token}': {
    operationId: 'getRefundClaim',
    description:
      'Public, for the claim page `/refund/<token>` (the token is the credential): the refund’s amount, token, merchant name, status, the chains the payer may choose, and the address once given. 404 for an unknown token, 410 once the link expired unanswered.',
  },
  'POST /v1/refund-claims/{token}': {
    operationId: 'submitRefundClaim',
    description:
      'Public: the payer gives `{ chainId, address }`, once. A second submission answers 409 and changes nothing; an expired link 410; an unknown token 404.',
  },

  // Refunds (dashboard twins)
  'POST /v1/merchants/me/sessions/{id}/refunds': {
    operationId: 'createDashboardRefund',
    description: DASHBOARD_TWIN,
  },
  'GET /v1/merchants/me/sessions/{id}/refunds': {
    operationId: 'listDashboardRefunds',
    description: DASHBOARD_TWIN,
  },
  'GET /v1/merchants/me/sessions/{id}/refunds/{refundId}': {
    operationId: 'getDashboardRefund',
    description: DASHBOARD_TWIN,
  },
  'POST /v1/merchants/me/sessions/{id}/refunds/{refundId}/cancel': {
    operationId: 'cancelDashboardRefund',
    description: DASHBOARD_TWIN,
  },
  'POST /v1/merchants/me/sessions/{id}/refunds/{refundId}/transaction': {
    operationId: 'reportDashboardRefundTransaction',
    description: DASHBOARD_TWIN,
  },
  'POST /v1/merchants/me/sessions/{id}/refunds/{refundId}/authorize': {
    operationId: 'authorizeDashboardRefund',
    description: DASHBOARD_TWIN,
  },

  // Subscription plans (API key, docs/service-contract.md "Routes")
  'POST /v1/plans': {
    operationId: 'createPlan',
    description:
      'Creates a subscription plan: a USD amount charged every `intervalCount` × `interval`, after optional trial days. Its `subscribeUrl` is the page a customer grants the periodic permission on.',
  },
  'GET /v1/plans': {
    operationId: 'listPlans',
    description: 'The merchant’s plans, newest first, archived ones included.',
  },
  'GET /v1/plans/{id}': { operationId: 'getPlan', description: 'One plan.' },
  'POST /v1/plans/{id}/archive': {
    operationId: 'archivePlan',
    description:
      'Archives a plan: it takes no new subscriber, its subscriptions keep charging. Archiving again changes nothing.',
  },

  // Subscription plans (dashboard twins)
  'POST /v1/merchants/me/plans': { operationId: 'createDashboardPlan', description: DASHBOARD_TWIN },
  'GET /v1/merchants/me/plans': { operationId: 'listDashboardPlans', description: DASHBOARD_TWIN },
  'GET /v1/merchants/me/plans/{id}': { operationId: 'getDashboardPlan', description: DASHBOARD_TWIN },
  'POST /v1/merchants/me/plans/{id}/archive': {
    operationId: 'archiveDashboardPlan',
    description: DASHBOARD_TWIN,
  },

  // Subscriptions (API key)
  'GET /v1/subscriptions': {
    operationId: 'listSubscriptions',
    description: 'The merchant’s subscriptions, newest first; filter by `planId` and `status`.',
  },
  'GET /v1/subscriptions/{id}': {
    operationId: 'getSubscription',
    description: 'One subscription: its plan, status, customer account, chain, token and current period.',
  },
  'POST /v1/subscriptions/{id}/cancel': {
    operationId: 'cancelSubscription',
    description:
      'Cancels a subscription: at once (`canceled`, `subscription.canceled` sent), or with `atPeriodEnd: true` at the end of its current period (no further charge). Canceling a canceled subscription changes nothing.',
  },
  'POST /v1/merchants/me/subscriptions/{id}/cancel': {
    operationId: 'cancelDashboardSubscription',
    description: DASHBOARD_TWIN,
  },
  'POST /v1/subscribe/{planId}': {
    operationId: 'subscribe',
    description:
      'Public, no credential (the subscribe page): the customer’s signed periodic permission for the plan. Judged before anything is saved: a permission that is not exactly the plan’s (delegate, token, chain, amount, period, expiry, signature, revocation) is refused with a sentence saying why. Accepted: 201 with the subscription (`trialing` with trial days, else `active`) and `subscription.created`; the same permission again answers 200 with it. Rate limited per client IP.',
  },
  'GET /v1/merchants/me/subscriptions': {
    operationId: 'listDashboardSubscriptions',
    description: DASHBOARD_TWIN,
  },
  'GET /v1/merchants/me/subscriptions/{id}': {
    operationId: 'getDashboardSubscription',
    description: DASHBOARD_TWIN,
  },

  'GET /v1/config': {
    operationId: 'getPlatformConfig',
    description:
      'Public, no credential: per chain where customers can subscribe, the subscription executor (the delegate a periodic permission must name), the Delegation Framework contracts and the stablecoins. Rate limited per client IP.',
  },

  // Webhooks (dashboard twins)
  'POST /v1/merchants/me/webhooks': {
    operationId: 'createDashboardWebhookEndpoint',
    description: DASHBOARD_TWIN,
  },
  'GET /v1/merchants/me/webhooks': {
    operationId: 'listDashboardWebhookEndpoints',
    description: DASHBOARD_TWIN,
  },
  'GET /v1/merchants/me/webhooks/{id}': {
    operationId: 'getDashboardWebhookEndpoint',
    description: DASHBOARD_TWIN,
  },
  'PATCH /v1/merchants/me/webhooks/{id}': {
    operationId: 'updateDashboardWebhookEndpoint',
    description: DASHBOARD_TWIN,
  },
  'DELETE /v1/merchants/me/webhooks/{id}': {
    operationId: 'deleteDashboardWebhookEndpoint',
    description: DASHBOARD_TWIN,
  },
  'POST /v1/merchants/me/webhooks/{id}/rotate-secret': {
    operationId: 'rotateDashboardWebhookSecret',
    description: DASHBOARD_TWIN,
  },
  'GET /v1/merchants/me/webhooks/{id}/deliveries': {
    operationId: 'listDashboardWebhookDeliveries',
    description: DASHBOARD_TWIN,
  },
  'POST /v1/merchants/me/webhooks/{id}/deliveries/{deliveryId}/resend': {
    operationId: 'resendDashboardWebhookDelivery',
    description: DASHBOARD_TWIN,
  },
  'POST /v1/merchants/me/webhooks/{id}/recover': {
    operationId: 'recoverDashboardWebhookDeliveries',
    description: DASHBOARD_TWIN,
  },
  'POST /v1/merchants/me/webhooks/{id}/send-test-event': {
    operationId: 'sendDashboardWebhookTestEvent',
    description: DASHBOARD_TWIN,
  },
  'POST /v1/merchants/me/sessions/{id}/retry-webhook': {
    operationId: 'retryDashboardSessionWebhook',
    description: DASHBOARD_TWIN,
  },

  // Checkout and yield sites (HTML pages)
  'GET /pay/{id}': {
    operationId: 'getCheckoutPage',
    description:
      'The checkout page (HTML) the payer opens from the session’s paymentUrl. Rate limited per client IP.',
  },
  'GET /': {
    operationId: 'getYieldSite',
    description:
      'A yield deployment’s site (HTML), served on its verified custom domain (chosen by the Host header).',
  },
  'GET /sites/{id}': {
    operationId: 'getYieldSitePreview',
    description: 'Preview of a yield deployment’s site (HTML) by deployment id.',
  },

  // Paymaster management
  'GET /v1/paymaster/clients': {
    operationId: 'listPaymasterClients',
    description:
      'The merchant’s paymaster clients (publishable `pmc_` ids) with their origins, chains and gas mode.',
  },
  'POST /v1/paymaster/clients': {
    operationId: 'createPaymasterClient',
    description:
      'Creates a paymaster client; its id is `pmc_live_` or `pmc_test_` by environment and is safe to ship in a web app.',
  },
  'PATCH /v1/paymaster/clients/{id}': {
    operationId: 'updatePaymasterClient',
    description: 'Changes a client’s label, allowed origins, allowed chains or gas mode.',
  },
  'DELETE /v1/paymaster/clients/{id}': {
    operationId: 'revokePaymasterClient',
    description: 'Revokes a paymaster client: its id stops authenticating at once.',
  },
  'GET /v1/paymaster/clients/{id}/policies': {
    operationId: 'listSponsorshipPolicies',
    description: 'A client’s sponsorship policies in their order: the first whose rules all pass sponsors.',
  },
  'POST /v1/paymaster/clients/{id}/policies': {
    operationId: 'createSponsorshipPolicy',
    description: 'Adds a sponsorship policy after the client’s others (chains, allowlist, window, budgets).',
  },
  'PUT /v1/paymaster/clients/{id}/policies/order': {
    operationId: 'orderSponsorshipPolicies',
    description: 'Sets the order of all of a client’s policies at once (`policyIds`, every policy once).',
  },
  'GET /v1/paymaster/clients/{id}/policies/{policyId}': {
    operationId: 'getSponsorshipPolicy',
    description: 'One sponsorship policy of the client.',
  },
  'PATCH /v1/paymaster/clients/{id}/policies/{policyId}': {
    operationId: 'updateSponsorshipPolicy',
    description: 'Changes a policy’s name, chains, allowlist, window, budgets or approval webhook.',
  },
  'DELETE /v1/paymaster/clients/{id}/policies/{policyId}': {
    operationId: 'deleteSponsorshipPolicy',
    description: 'Deletes a policy; the ones after it move up.',
  },
  'GET /v1/paymaster/allowlist': {
    operationId: 'listAllowlistEntries',
    description: 'The contracts sponsored operations may call, per chain.',
  },
  'POST /v1/paymaster/allowlist': {
    operationId: 'allowContract',
    description: 'Allows a contract on a chain (an upsert on chainId and contractAddress).',
  },
  'DELETE /v1/paymaster/allowlist/{id}': {
    operationId: 'deleteAllowlistEntry',
    description: 'Removes a contract from the allowlist.',
  },
  'GET /v1/paymaster/deny-rules': {
    operationId: 'listDenyRules',
    description: 'The senders and call targets the merchant refuses to sponsor, per chain.',
  },
  'POST /v1/paymaster/deny-rules': {
    operationId: 'createDenyRule',
    description: 'Blocks a sender or a call target on a chain (an upsert on chainId, kind and address).',
  },
  'DELETE /v1/paymaster/deny-rules/{id}': {
    operationId: 'deleteDenyRule',
    description: 'Removes a deny rule.',
  },
  'GET /v1/paymaster/limits': {
    operationId: 'getSponsorshipLimits',
    description:
      'Sponsorship limits: the platform’s, the merchant’s and the effective (lower) value of each.',
  },
  'PATCH /v1/paymaster/limits': {
    operationId: 'updateSponsorshipLimits',
    description: 'Tightens the merchant’s sponsorship limits below the platform’s; null clears a value.',
  },
  'GET /v1/paymaster/usage': {
    operationId: 'listSponsorshipUsage',
    description: 'Sponsorship usage records (one per decision and operation), newest first, cursor-paged.',
  },
  'GET /v1/merchants/me/paymaster/overview': {
    operationId: 'getPaymasterOverview',
    description: 'Paymaster figures of a time window: operations per status group and mode, and gas spent.',
  },
  'GET /v1/merchants/me/paymaster/overview/recent-ops': {
    operationId: 'listRecentPaymasterOperations',
    description: 'The most recent signed operations, newest first.',
  },
  'GET /v1/merchants/me/paymaster/activity': {
    operationId: 'listPaymasterActivity',
    description: 'Every paymaster decision and operation, newest first, cursor-paged.',
  },

  // Paymaster (integrator)
  'POST /v1/paymaster/rpc': {
    operationId: 'callPaymasterRpc',
    description:
      'The paymaster’s ERC-7677 JSON-RPC: `pm_getPaymasterStubData`, `pm_getPaymasterData`, `pm_sponsorUserOperation`. JSON-RPC errors answer HTTP 200; a message starting `Policy denied: ` is a policy decision, so do not fall back to another paymaster.',
  },
  'POST /v1/paymaster/bundler/{chainId}': {
    operationId: 'callBundler',
    description:
      'Relays ERC-4337 bundler JSON-RPC to the chain’s bundler, byte for byte, after the client, chain, gas mode and balance checks.',
  },

  // Billing
  'GET /v1/merchants/me/balance': {
    operationId: 'getBalance',
    description: 'Billing summary: prepaid gas balance, markup and the current period’s charges.',
  },
  'GET /v1/merchants/me/balance/charges': {
    operationId: 'listGasCharges',
    description: 'Gas charges against the prepaid balance, newest first, cursor-paged.',
  },
  'GET /v1/merchants/me/balance/charges.csv': {
    operationId: 'exportGasCharges',
    description: 'Gas charges of a UTC date range (inclusive) as CSV, oldest first.',
  },
  'GET /v1/merchants/me/balance/statement.pdf': {
    operationId: 'getMonthlyStatement',
    description: 'The prepaid gas statement (PDF) of a closed UTC month.',
  },
  'GET /v1/merchants/me/balance/topups': {
    operationId: 'listTopups',
    description: 'Top-ups of the prepaid balance, newest first.',
  },
  'POST /v1/merchants/me/balance/topups': {
    operationId: 'createTopup',
    description: 'Self-serve top-up: a payment session whose completion credits the prepaid balance.',
  },

  // Yield deployments
  'GET /v1/merchants/me/yield-deployments/deploy-options': {
    operationId: 'getYieldDeployOptions',
    description: 'A network’s vault factory and the tokens a yield deployment may have vaults for.',
  },
  'GET /v1/merchants/me/yield-deployments/contract-sets': {
    operationId: 'listYieldContractSets',
    description: 'The merchant’s deployed vault sets on a network, newest first.',
  },
  'GET /v1/merchants/me/yield-deployments': {
    operationId: 'listYieldDeployments',
    description: 'The merchant’s yield deployments, newest first.',
  },
  'POST /v1/merchants/me/yield-deployments': {
    operationId: 'createYieldDeployment',
    description: 'Creates a draft yield deployment; its tokens default to every permitted token.',
  },
  'GET /v1/merchants/me/yield-deployments/{id}': {
    operationId: 'getYieldDeployment',
    description: 'One yield deployment with its vaults, domains and status.',
  },
  'PATCH /v1/merchants/me/yield-deployments/{id}': {
    operationId: 'updateYieldDeployment',
    description: 'Changes the name or the branding (a new branding replaces the whole object).',
  },
  'DELETE /v1/merchants/me/yield-deployments/{id}': {
    operationId: 'deleteYieldDeployment',
    description: 'Deletes a draft; any other status answers 409.',
  },
  'POST /v1/merchants/me/yield-deployments/{id}/contracts': {
    operationId: 'linkYieldContracts',
    description:
      'Links one of the merchant’s deployed vault sets to an unconfigured draft, making it active.',
  },
  'POST /v1/merchants/me/yield-deployments/{id}/deploy': {
    operationId: 'deployYieldDeployment',
    description: 'Queues the on-chain vault deployment of a draft (a workflow per deployment).',
  },
  'POST /v1/merchants/me/yield-deployments/{id}/sunset': {
    operationId: 'sunsetYieldDeployment',
    description: 'Retires an active deployment: its site then offers withdrawals only.',
  },
  'DELETE /v1/merchants/me/yield-deployments/{id}/sunset': {
    operationId: 'unsunsetYieldDeployment',
    description: 'Returns a sunset deployment to the active list.',
  },
  'GET /v1/merchants/me/yield-deployments/{id}/redeem-requests': {
    operationId: 'listYieldRedeemRequests',
    description:
      'The ERC-7540 redemption requests on the deployment’s vaults, read from the chain, newest first: pending with the time left, claimable, or claimed.',
  },
  'POST /v1/merchants/me/yield-deployments/{id}/domains': {
    operationId: 'addYieldDomain',
    description:
      'Attaches a custom domain to a deployment; publish the TXT record in the answer to verify it.',
  },
  'DELETE /v1/merchants/me/yield-deployments/{id}/domains/{domainId}': {
    operationId: 'deleteYieldDomain',
    description: 'Removes a custom domain; its site stops answering there at once.',
  },
};

/** One line per tag, in the order a reader meets them. */
export const TAG_DESCRIPTIONS: Record<string, string> = {
  Health: 'Liveness, readiness and metrics of the api process.',
  Contracts: 'This document and the integrator contract, as OpenAPI 3.1.',
  Login: 'Merchant sign-in: Sign-In with Ethereum or an e-mailed code, giving a merchant token (JWT).',
  'Merchant account': 'The signed-in merchant’s profile, e-mail verification and smart accounts.',
  'API keys': 'Secret `sk_` keys for server-to-server calls (session creation, webhooks).',
  'Payment sessions': 'Invoices paid in stablecoins: create, read, list, and repair a failed settlement.',
  Webhooks:
    'Endpoints that receive signed events, their deliveries, resends, test events and secret rotation.',
  Refunds:
    'Money of a session paid back to its payer: from the forwarder before settlement, or by the merchant after it.',
  Subscriptions:
    'Plans charged by the period from a customer’s periodic ERC-20 permission, and their subscriptions.',
  Checkout: 'The hosted checkout page a payer opens.',
  'Paymaster clients':
    'Publishable `pmc_` client ids that authenticate the paymaster JSON-RPC and bundler proxy.',
  'Paymaster policies': 'What the paymaster sponsors: contract allowlist, deny rules, sponsorship limits.',
  'Paymaster usage': 'One record per sponsorship decision and operation.',
  'Paymaster activity': 'Figures and feeds of the paymaster’s decisions and operations.',
  Paymaster: 'The ERC-4337 paymaster JSON-RPC (ERC-7677) and the bundler proxy, authenticated by client id.',
  Billing: 'The prepaid gas balance, its charges, top-ups and monthly statements.',
  'Yield deployments': 'Yield vault products: drafts, on-chain deployment, custom domains.',
  'Yield sites': 'The public yield sites (HTML) on custom domains and as previews.',
  Events: 'Webhook events: signed POST requests the service sends to the merchant’s endpoints.',
};
