import Koa from 'koa';
import type { Config } from '../config';
import { createTemporalClient, temporalTargetOf } from '../workflowClient/connection';
import { createNetworkRegistry, type NetworkRegistry } from '../chain/networkRegistry';
import { createPublicClients } from '../chain/publicClients';
import { taskQueueNames } from '../workflows/taskQueues';
import type { Db } from '../db/client';
import { createChainClocks } from '../chain/chainClock';
import { createSponsorshipLimits, type SponsorshipLimits } from '../paymaster/limits/limits';
import { createChainFeeLevels } from '../chain/operationBounds';
import { createEthUsdPrices } from '../paymaster/pricing/prices';
import { createSignerClient } from '../paymaster/rpc/signerClient';
import type { AppContext } from './appContext';
import { workflowStartMarks } from './sessions/workflowStartMarks';
import { requireApiKey, requireMerchantToken } from './auth/authenticate';
import { ApiKeyCache, uncachedApiKeyLookups, type ApiKeyLookups } from './auth/apiKeyCache';
import { ListenedCache, uncachedLookups, type CachedLookups } from './auth/listenedCache';
import {
  PAYMASTER_CONFIG_CHANGES_CHANNEL,
  readMerchantPaymasterConfig,
  type MerchantPaymasterConfig,
} from '../db/paymasterMerchantConfig';
import {
  PAYMASTER_CLIENT_CHANGES_CHANNEL,
  findActivePaymasterClient,
  type PaymasterClientRow,
} from '../db/paymasterClients';
import {
  SessionRevocationList,
  uncachedSessionRevocations,
  type SessionRevocationChecks,
} from './auth/sessionRevocations';
import {
  isSessionTokenRevoked,
  listLiveSessionTokenRevocations,
  SESSION_TOKEN_REVOCATIONS_CHANNEL,
} from '../db/sessionTokenRevocations';
import { API_KEY_CHANGES_CHANNEL, findActiveApiKeyByHash, touchApiKeyLastUsed } from '../db/apiKeys';
import { createEmailCodes, emailCodeHashKeyFromConfig } from './auth/emailCodes';
import { createMailer } from '../mail/mailer';
import { requirePaymasterClient } from './auth/paymasterClient';
import { createMerchantTokenService } from './auth/merchantTokens';
import type { Logger } from '../logging/logger';
import { createHttpMetrics } from './metrics';
import { limitPerClientIp } from './rateLimits';
import { createRequestRates } from './requestRateLeases';
import { errorBody } from './middleware/errorBody';
import { jsonBody } from './middleware/jsonBody';
import { requestContext } from './middleware/requestContext';
import { serveOnlyYieldSitesOnCustomDomains } from './middleware/customDomainSites';
import { resolveRevision } from './revision';
import { HealthFirstKoa } from './healthFirst';
import { mountRoutes, type Authenticators } from './routing/mountRoutes';
import type { AnyRoute } from './routing/route';
import { authRoutes } from './routes/auth';
import { emailLoginRoutes } from './routes/emailLogin';
import { signInCodeRoutes } from './routes/signInCodeLogin';
import { emailVerificationRoutes } from './routes/merchants/emailVerification';
import { dashboardPages } from './routes/dashboard';
import { checkoutRoutes } from './routes/checkout';
import { platformConfigRoutes } from './routes/platformConfig';
import { subscribeRoutes } from './routes/subscriptions/subscribe';
import { subscribePageRoutes } from './routes/subscriptions/subscribePage';
import { manageLinkRoutes } from './routes/subscriptions/manageLink';
import { healthRoutes, metricsAccess } from './routes/health';
import { apiKeyRoutes } from './routes/merchants/apiKeys';
import { profileRoutes } from './routes/merchants/profile';
import { smartAccountRoutes } from './routes/merchants/smartAccounts';
import { paymasterActivityRoutes } from './routes/paymaster/activity';
import { billingBalanceRoutes } from './routes/billing/balance';
import { billingTopupRoutes } from './routes/billing/topups';
import { paymasterAllowlistRoutes } from './routes/paymaster/allowlist';
import { paymasterBundlerRoutes } from './routes/paymaster/bundler';
import { paymasterClientRoutes } from './routes/paymaster/clients';
import { paymasterPolicyRoutes } from './routes/paymaster/policies';
import { paymasterDenyRuleRoutes } from './routes/paymaster/denyRules';
import { paymasterLimitRoutes } from './routes/paymaster/limits';
import { paymasterRpcRoutes } from './routes/paymaster/rpc';
import { paymasterUsageRoutes } from './routes/paymaster/usage';
import { dashboardSessionRoutes } from './routes/sessions/dashboardSessions';
import { sessionRoutes } from './routes/sessions/sessions';
import { openApiRoutes } from './routes/openapi';
import { refundRoutes } from './routes/refunds/refunds';
import { refundClaimRoutes } from './routes/refunds/refundClaims';
import { planRoutes } from './routes/plans/plans';
import { subscriptionRoutes } from './routes/subscriptions/subscriptions';
import { webhookRoutes } from './routes/webhooks';
import { yieldDeploymentRoutes } from './routes/yield/deployments';
import { yieldDomainRoutes } from './routes/yield/domains';
import { yieldRedeemRequestRoutes } from './routes/yield/redeemRequests';
import { yieldSiteRoutes } from './routes/yield/site';
import { createWebhookSecretBox, webhookSecretKeyFromConfig } from '../webhooks/webhookSecrets';
import { assertTreasuryConfigured } from '../billing/platformTreasury';
import {
  checkReadiness,
  postgresCheck,
  signerCheck,
  temporalCheck,
  type Readiness,
} from '../health/readiness';
import type { Tracing } from '../tracing/tracing';

/** `/ready` of a replica that is stopping: the load balancer takes it out while it drains. */
const STOPPING: Readiness = {
  ready: false,
  dependencies: [{ name: 'api', ok: false, ms: 0, problem: 'stopping' }],
};

/** What the HTTP app needs from the outside world; tests hand in real instances. */
export interface AppDependencies {
  config: Config;
  db: Db;
  logger: Logger;
  now?: () => Date;
  /** Defaults to the registry built from configuration (DEPLOYMENTS_FILE, RPC_URL_<chainId>). */
  networks?: NetworkRegistry;
  /**
   * For benchmarks and tests only: replaces the authenticator of the auth kinds given (e.g. one that
   * sets a fixed merchant, to measure a route without its credential check). Production never sets it.
   */
  authenticators?: Authenticators;
  /**
   * For benchmarks only: replaces the paymaster RPC's sponsorship limits (price reads and counters),
   * to measure what exact accounting costs. Production never sets it.
   */
  sponsorshipLimits?: SponsorshipLimits;
  /** OpenTelemetry tracing, when the process started it (OTEL_EXPORTER_OTLP_ENDPOINT): request spans and traced workflow starts. */
  tracing?: Tracing;
}

export interface App {
  koa: Koa;
  /** Every route definition, as mounted (the OpenAPI documents and the auth-matrix test walk this). */
  routes: AnyRoute[];
  /** sk_ key lookups (the LISTEN/NOTIFY-invalidated cache); tests read its stats. */
  apiKeys: ApiKeyLookups;
  /** Paymaster client lookups (the LISTEN/NOTIFY-invalidated cache); tests read its stats. */
  paymasterClients: CachedLookups<PaymasterClientRow>;
  /** The merchants' paymaster configuration (the LISTEN/NOTIFY-invalidated cache, issue 46); tests read its stats. */
  paymasterConfigs: CachedLookups<MerchantPaymasterConfig>;
  /** From now on `/ready` answers 503 (`stopping`): the graceful stop's first step (api/httpServer.ts). */
  markNotReady(): void;
  /**
   * Waits for e-mails still being sent, then closes what the app opened lazily (the Temporal connection,
   * the SMTP transport); the database belongs to the caller.
   */
  close(): Promise<void>;
}

/** Wires middleware and the route table. Creating the app opens no connections. */
export async function createApp(deps: AppDependencies): Promise<App> {
  assertTreasuryConfigured(deps.config);
  const temporal = await createTemporalClient({
    ...temporalTargetOf(deps.config),
    lazy: true,
    interceptors: deps.tracing?.workflowClientInterceptors,
  });
  const context = await appContextOf(deps, temporal.client);
  const { apiKeys, sessionRevocations, paymasterClients, paymasterConfigs, requestRates } = context;
  const lifecycle = { stopping: false };
  const revision = resolveRevision(deps.config.REVISION);
  const metrics = createHttpMetrics();

  const routes = routeTable(deps, context, revision, metrics.registry, lifecycle);
  routes.push(...openApiRoutes({ routes, config: deps.config, revision }));

  const { router, staticRoutes } = mountRoutes(
    routes,
    {
      jwt: requireMerchantToken(context.tokens, sessionRevocations),
      sk: requireApiKey((keyHash) => apiKeys.find(keyHash)),
      client: requirePaymasterClient(context.db, context.logger, {
        findActiveClient: (clientId) => paymasterClients.find(clientId),
        queryClientIdPathPrefix: '/v1/paymaster/bundler/',
        jsonRpcPath: '/v1/paymaster/rpc',
        requestRate: requestRates.paymasterClient,
      }),
      ...deps.authenticators,
    },
    // Login and the public reads, per client IP: the first step of each route that declares one.
    {
      login: limitPerClientIp(requestRates.login),
      publicSession: limitPerClientIp(requestRates.publicSession),
    },
  );

  // TRUST_PROXY hops of X-Forwarded-For are believed (ctx.ip is the address the first trusted proxy
  // saw); with 0 the header is ignored, so nobody can pick their own IP for the per-IP limits.
  // `GET /health` is answered before the middleware chain, with the same request id, access line and metric.
  const koa = new HealthFirstKoa(
    { proxy: deps.config.TRUST_PROXY > 0, maxIpsCount: deps.config.TRUST_PROXY },
    {
      revision,
      logger: deps.logger,
      metrics,
      publicBaseUrl: deps.config.PUBLIC_BASE_URL,
      enabled: !deps.tracing,
    },
  );
  if (deps.tracing) koa.use(deps.tracing.requestSpans());
  koa.use(requestContext(deps.logger, metrics));
  koa.use(errorBody());
  koa.use(serveOnlyYieldSitesOnCustomDomains({ db: context.db, publicBaseUrl: deps.config.PUBLIC_BASE_URL }));
  koa.use(dashboardPages());
  koa.use(jsonBody({ limitBytes: deps.config.BODY_LIMIT_BYTES, jsonRpcPaths: ['/v1/paymaster/rpc'] }));
  koa.use(staticRoutes);
  koa.use(router.routes()).use(router.allowedMethods());
  return {
    koa,
    routes,
    apiKeys,
    paymasterClients,
    paymasterConfigs,
    markNotReady: () => {
      lifecycle.stopping = true;
    },
    close: async () => {
      await apiKeys.close();
      await paymasterClients.close();
      await paymasterConfigs.close();
      await sessionRevocations.close();
      await context.mailer.drain();
      await temporal.close();
    },
  };
}

/**
 * sk_ key lookups, paymaster client lookups and session-token revocations: LISTEN/NOTIFY-invalidated
 * caches when a database URL is set.
 */
function credentialCaches(deps: AppDependencies): {
  apiKeys: ApiKeyLookups;
  paymasterClients: CachedLookups<PaymasterClientRow>;
  paymasterConfigs: CachedLookups<MerchantPaymasterConfig>;
  sessionRevocations: SessionRevocationChecks;
} {
  const lookupApiKey = (keyHash: string) => findActiveApiKeyByHash(deps.db, keyHash);
  const lookupPaymasterClient = (clientId: string) => findActivePaymasterClient(deps.db, clientId);
  const lookupRevocation = (tokenId: string) => isSessionTokenRevoked(deps.db, tokenId);
  const lookupPaymasterConfig = (merchantId: string) => readMerchantPaymasterConfig(deps.db, merchantId);
  // The listeners connect on first use, to the database the pool uses.
  return {
    apiKeys: deps.config.DATABASE_URL
      ? new ApiKeyCache({
          connectionString: deps.config.DATABASE_URL,
          channel: API_KEY_CHANGES_CHANNEL,
          lookup: lookupApiKey,
          touch: (id) => touchApiKeyLastUsed(deps.db, id),
          logger: deps.logger,
        })
      : uncachedApiKeyLookups(lookupApiKey),
    // The paymaster's hot path: one Postgres round trip fewer per request (issue 33).
    paymasterClients: deps.config.DATABASE_URL
      ? new ListenedCache({
          connectionString: deps.config.DATABASE_URL,
          channel: PAYMASTER_CLIENT_CHANGES_CHANNEL,
          applicationName: 'stablepay-paymaster-client-cache',
          lostMessage: 'paymaster client cache listener lost; serving from the database',
          lookup: lookupPaymasterClient,
          logger: deps.logger,
        })
      : uncachedLookups(lookupPaymasterClient),
    // The signed answer's decision reads (issue 46): its one round trip is then the recording.
    paymasterConfigs: deps.config.DATABASE_URL
      ? new ListenedCache({
          connectionString: deps.config.DATABASE_URL,
          channel: PAYMASTER_CONFIG_CHANGES_CHANNEL,
          applicationName: 'stablepay-paymaster-config-cache',
          lostMessage: 'paymaster configuration cache listener lost; serving from the database',
          lookup: lookupPaymasterConfig,
          logger: deps.logger,
          maxEntries: 2_000,
        })
      : uncachedLookups(lookupPaymasterConfig),
    sessionRevocations: deps.config.DATABASE_URL
      ? new SessionRevocationList({
          connectionString: deps.config.DATABASE_URL,
          channel: SESSION_TOKEN_REVOCATIONS_CHANNEL,
          loadLive: (at) => listLiveSessionTokenRevocations(deps.db, at),
          lookup: lookupRevocation,
          logger: deps.logger,
        })
      : uncachedSessionRevocations(lookupRevocation),
  };
}

/** What every route handler reads: the services the app builds once from its dependencies. */
async function appContextOf(deps: AppDependencies, temporal: AppContext['temporal']): Promise<AppContext> {
  const publicClients = createPublicClients(deps.config);
  const networks = deps.networks ?? createNetworkRegistry(deps.config);
  const now = deps.now ?? (() => new Date());
  const ethUsdPrices = createEthUsdPrices({
    config: deps.config,
    publicClients,
    networks,
    logger: deps.logger,
  });
  return {
    config: deps.config,
    db: deps.db,
    logger: deps.logger,
    tokens: await createMerchantTokenService(deps.config),
    publicClients,
    networks,
    temporal,
    taskQueues: taskQueueNames(deps.config.TEMPORAL_TASK_QUEUE_PREFIX),
    paymasterSigner: createSignerClient({
      url: deps.config.SIGNER_URL,
      sharedSecret: deps.config.SIGNER_SHARED_SECRET,
      timeoutMs: deps.config.SIGNER_TIMEOUT_MS,
    }),
    sponsorshipLimits:
      deps.sponsorshipLimits ??
      createSponsorshipLimits({
        db: deps.db,
        config: deps.config,
        prices: ethUsdPrices,
        now,
      }),
    ethUsdPrices,
    chainFees: createChainFeeLevels({ publicClients, logger: deps.logger }),
    chainClocks: createChainClocks({ publicClients, logger: deps.logger }),
    webhookSecrets: createWebhookSecretBox(webhookSecretKeyFromConfig(deps.config)),
    emailCodes: createEmailCodes({ hashKey: emailCodeHashKeyFromConfig(deps.config) }),
    mailer: createMailer({ config: deps.config, logger: deps.logger }),
    ...credentialCaches(deps),
    requestRates: createRequestRates({ config: deps.config, db: deps.db, logger: deps.logger }),
    markWorkflowStarted: workflowStartMarks(deps.db),
    now,
  };
}

/** The route table, resource by resource (the OpenAPI routes are added over it). */
function routeTable(
  deps: AppDependencies,
  context: AppContext,
  revision: ReturnType<typeof resolveRevision>,
  registry: ReturnType<typeof createHttpMetrics>['registry'],
  lifecycle: { stopping: boolean },
): AnyRoute[] {
  return [
    ...healthRoutes({
      revision,
      registry,
      metricsAccessOf: metricsAccess({
        token: deps.config.METRICS_TOKEN,
        production: deps.config.NODE_ENV === 'production',
      }),
      readiness: () => {
        if (lifecycle.stopping) return Promise.resolve(STOPPING);
        const timeoutMs = deps.config.READY_CHECK_TIMEOUT_MS;
        return checkReadiness(
          [
            postgresCheck(deps.db),
            temporalCheck(context.temporal, timeoutMs),
            ...(deps.config.SIGNER_URL ? [signerCheck(deps.config.SIGNER_URL, timeoutMs)] : []),
          ],
          timeoutMs,
        );
      },
    }),
    ...authRoutes(context),
    ...emailLoginRoutes(context),
    ...signInCodeRoutes(context),
    ...profileRoutes(context),
    ...smartAccountRoutes(context),
    ...emailVerificationRoutes(context),
    ...apiKeyRoutes(context),
    ...sessionRoutes(context),
    ...dashboardSessionRoutes(context),
    ...webhookRoutes(context),
    ...planRoutes(context),
    ...refundRoutes(context),
    ...refundClaimRoutes(context),
    ...subscriptionRoutes(context),
    ...platformConfigRoutes(context),
    ...subscribeRoutes(context),
    ...subscribePageRoutes(context),
    ...manageLinkRoutes(context),
    ...checkoutRoutes(context),
    ...paymasterClientRoutes(context),
    ...paymasterPolicyRoutes(context),
    ...paymasterAllowlistRoutes(context),
    ...paymasterDenyRuleRoutes(context),
    ...paymasterLimitRoutes(context),
    ...paymasterUsageRoutes(context),
    ...paymasterActivityRoutes(context),
    ...billingBalanceRoutes(context),
    ...billingTopupRoutes(context),
    ...yieldDeploymentRoutes(context),
    ...yieldDomainRoutes(context),
    ...yieldRedeemRequestRoutes(context),
    ...yieldSiteRoutes(context),
    ...paymasterRpcRoutes(context),
    ...paymasterBundlerRoutes(context),
  ];
}
