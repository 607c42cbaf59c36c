import { z } from 'zod';
import { REFUND_STATUSES } from '../../../db/refundStatus';
import { readRefundClaim, submitRefundClaim } from '../../refunds/refundClaims';
import type { AppContext } from '../../appContext';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { createRefundBody } from './refundModels';

/**
 * The claim link's API, public (the token is the credential), for the claim page `/refund/<token>`:
 * | GET  | /v1/refund-claims/{token} | none | 200 the refund's public facts; 404 unknown token; 410 expired |
 * | POST | /v1/refund-claims/{token} | none | `{ chainId, address }` once: 200; 400 field; 404; 409 already given; 410 expired |
 */

const claimTokenParams = z.object({
  // 32 random bytes, base64url: anything else is not a token we issued (and answers 404 like a guess).
  token: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'Refund link not found'),
});

const claimBody = z
  .object({
    chainId: z
      .number({ error: 'must be one of the refund’s chain ids' })
      .int('must be one of the refund’s chain ids'),
    address: createRefundBody.shape.address.unwrap(),
  })
  .strict()
  .meta({ id: 'RefundClaimSubmission' });

const claimViewSchema = z
  .object({
    amount: z.string().describe('Decimal USD the payer gets back'),
    token: z.string().describe('Stablecoin symbol it is paid in'),
    merchantName: z.string().nullable(),
    status: z.enum(REFUND_STATUSES),
    chains: z
      .array(z.object({ chainId: z.number().int(), network: z.string() }))
      .describe('The chains the payer may choose'),
    chainId: z.number().int().nullable(),
    address: z.string().nullable().describe('The address given, once given'),
    expiresAt: z.string().describe('Until when the link takes an address'),
  })
  .meta({ id: 'RefundClaim' });

const CLAIM_PATH = '/v1/refund-claims/:token';

export function refundClaimRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: CLAIM_PATH,
      auth: 'none',
      perIpLimit: 'publicSession',
      tag: 'Refunds',
      audience: 'dashboard',
      summary: 'A refund’s public facts, for its claim page',
      params: claimTokenParams,
      responses: {
        200: { description: 'The refund as its payer sees it', schema: claimViewSchema },
        404: { description: 'Unknown token' },
        410: { description: 'The link expired before an address was given' },
      },
      async handler({ params }) {
        return { status: 200, body: await readRefundClaim(app, params.token) };
      },
    }),

    defineRoute({
      method: 'post',
      path: CLAIM_PATH,
      auth: 'none',
      perIpLimit: 'publicSession',
      tag: 'Refunds',
      audience: 'dashboard',
      summary: 'The payer gives the refund’s chain and address, once',
      params: claimTokenParams,
      body: claimBody,
      responses: {
        200: { description: 'The refund with its address', schema: claimViewSchema },
        400: { description: 'Invalid chain or address' },
        404: { description: 'Unknown token' },
        409: { description: 'The address was given already' },
        410: { description: 'The link expired' },
      },
      async handler({ params, body }) {
        return { status: 200, body: await submitRefundClaim(app, params.token, body) };
      },
    }),
  ];
}
