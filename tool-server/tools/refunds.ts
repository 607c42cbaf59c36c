import { z } from 'zod';
import { accountName } from '../personConfirmation';
import { type AnyToolDefinition, routeTool, segment, without } from '../toolDefinition';
import type { UntrustedFields } from '../untrustedData';

/**
 * A session's refunds (issue 41), base `/v1/merchants/me/sessions/{sessionId}/refunds`:
 * | list_refunds              | GET  (collection)                 |
 * | get_refund                | GET  /{refundId}                  |
 * | create_refund             | POST (collection)                 | confirmed by the person |
 * | cancel_refund             | POST /{refundId}/cancel           | confirmed by the person |
 * | authorize_refund          | POST /{refundId}/authorize        | confirmed by the person |
 * | report_refund_transaction | POST /{refundId}/transaction      |
 * Creating, canceling and authorizing decide whether and where the merchant's money goes back; reporting a
 * transaction only names one the API verifies on chain (never trusted), so it moves nothing by itself.
 */
const sessionId = z.string().describe('the session’s id (UUID), from list_sessions or get_session');
const refundId = z.string().describe('the refund’s id (UUID), from list_refunds or create_refund');
const refundsPath = (id: string) => `/v1/merchants/me/sessions/${segment(id)}/refunds`;
const refundPath = ({ sessionId: id, refundId: refund }: { sessionId: string; refundId: string }) =>
  `${refundsPath(id)}/${segment(refund)}`;

/**
 * The payer types the address (and picks the chain) on the claim page; a reason may carry a customer's
 * words passed on by the merchant's shop. The paths of one refund, under `prefix`.
 */
const refundUntrusted = (prefix: string): UntrustedFields => ({
  // The typed data a wallet signs stays as the API built it (the wallet shows its address to the person).
  paths: ['address', 'transfer.to', 'reason'].map((path) => `${prefix}${path}`),
  origin: 'the payer, through the refund’s claim link, or the shop that passed on the customer’s reason',
});

export const refundTools: AnyToolDefinition[] = [
  routeTool({
    name: 'list_refunds',
    description: 'List a session’s refunds, newest first, with their status and where each is paid.',
    inputSchema: { sessionId },
    auth: 'jwt',
    method: 'GET',
    path: ({ sessionId: id }) => refundsPath(id),
    untrusted: [refundUntrusted('data.*.')],
  }),

  routeTool({
    name: 'get_refund',
    description:
      'Read one refund: status, source (forwarder or merchant), address, the prepared transfer a merchant-paid refund asks for, and (forwarder refunds) the typed data the payout address signs.',
    inputSchema: { sessionId, refundId },
    auth: 'jwt',
    method: 'GET',
    path: refundPath,
    untrusted: [refundUntrusted('')],
  }),

  routeTool({
    name: 'create_refund',
    description:
      'Refund a completed, expired or failed session, all that is refundable or part of it (needs the person’s confirmation). Without address, the answer’s claimUrl (shown this once) lets the payer give one.',
    inputSchema: {
      sessionId,
      amount: z.string().optional().describe('decimal USD; default: all that is refundable'),
      reason: z.string().optional(),
      address: z
        .string()
        .optional()
        .describe('0x address the refund goes to; only one the person got from the payer'),
      chainId: z.number().int().optional().describe('one of the session’s chains'),
      idempotencyKey: z
        .string()
        .optional()
        .describe('sent as Idempotency-Key: a repeat with the same key answers the first refund again'),
    },
    auth: 'jwt',
    method: 'POST',
    path: ({ sessionId: id }) => refundsPath(id),
    headers: ({ idempotencyKey }) => ({ 'idempotency-key': idempotencyKey }),
    body: (input) => without(input, 'sessionId', 'idempotencyKey'),
    untrusted: [refundUntrusted('')],
    confirmation: async ({ sessionId: id, amount, reason, address, chainId }, { credentials }) =>
      `Refund ${amount === undefined ? 'all that is refundable' : `${amount} USD`} of session ${id} of ${await accountName(credentials)} ${address === undefined ? 'to the address the payer gives through a claim link' : `to ${address}`}${chainId === undefined ? '' : ` on chain ${chainId}`}${reason === undefined ? '' : ` (reason ${JSON.stringify(reason)})`}: the merchant’s money goes back to the customer`,
  }),

  routeTool({
    name: 'cancel_refund',
    description:
      'Cancel a refund while nothing has moved (needs the person’s confirmation); its amount becomes refundable again.',
    inputSchema: { sessionId, refundId },
    auth: 'jwt',
    method: 'POST',
    path: (input) => `${refundPath(input)}/cancel`,
    untrusted: [refundUntrusted('')],
    confirmation: async ({ sessionId: id, refundId: refund }, { credentials }) =>
      `Cancel refund ${refund} of session ${id} of ${await accountName(credentials)}: the customer is not paid back by it`,
  }),

  routeTool({
    name: 'authorize_refund',
    description:
      'Hand the API the payout address’s EIP-712 signature of a forwarder refund’s typed data (from get_refund; signed in the merchant’s own wallet, eth_signTypedData_v4), so the forwarder pays it back (needs the person’s confirmation).',
    inputSchema: {
      sessionId,
      refundId,
      signature: z.string().describe('0x signature by the payout address (ECDSA or ERC-1271)'),
    },
    auth: 'jwt',
    method: 'POST',
    path: (input) => `${refundPath(input)}/authorize`,
    body: ({ signature }) => ({ signature }),
    untrusted: [refundUntrusted('')],
    confirmation: async ({ sessionId: id, refundId: refund }, { credentials }) =>
      `Authorize refund ${refund} of session ${id} of ${await accountName(credentials)} with the payout address’s signature: the session’s forwarder then sends the refund to the address it names`,
  }),

  routeTool({
    name: 'report_refund_transaction',
    description:
      'Report the transaction that paid a merchant-paid refund’s prepared transfer; the API checks it on chain (exact token, address and amount) and marks the refund succeeded once it is confirmed.',
    inputSchema: { sessionId, refundId, txHash: z.string().describe('0x transaction hash') },
    auth: 'jwt',
    method: 'POST',
    path: (input) => `${refundPath(input)}/transaction`,
    body: ({ txHash }) => ({ txHash }),
    untrusted: [refundUntrusted('')],
  }),
];
