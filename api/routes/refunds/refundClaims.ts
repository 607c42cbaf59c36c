import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { REFUND_STATUSES } from '../../../db/refundStatus';
import { readRefundClaim, submitRefundClaim } from '../../refunds/refundClaims';
import { setStrictPageHeaders } from '../../../web/strictPageHeaders';
import {
  renderRefundClaimEndPage,
  renderRefundClaimPage,
} from '../../../web/refundClaim/renderRefundClaimPage';
import type { AppContext } from '../../appContext';
import { HttpError } from '../../httpErrors';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { createRefundBody } from './refundModels';

/**
 * The claim link's API, public (the token is the credential), for the claim page `/refund/<token>`:
 * | GET  | /v1/refund-claims/{token} | none | 200 the refund's public facts; 404 unknown token; 410 expired |
 * | POST | /v1/refund-claims/{token} | none | `{ chainId, address }` once: 200; 400 field; 404; 409 already given; 410 expired |
 * | GET  | /refund/{token}           | none | 200 text/html claim page (the checkout page's CSP); 404 / 410 text/html |
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
      path: '/refund/:token',
      auth: 'none',
      perIpLimit: 'publicSession',
      tag: 'Refunds',
      audience: 'dashboard',
      summary: 'The refund claim page the payer opens from the claimUrl',
      responses: {
        200: { description: 'Claim page', contentType: 'text/html', schema: z.string() },
        404: {
          description: 'Unknown or malformed link (HTML page)',
          contentType: 'text/html',
          schema: z.string(),
        },
        410: { description: 'Expired link (HTML page)', contentType: 'text/html', schema: z.string() },
      },
      // The token is checked here rather than by a params schema: a bad link answers the HTML page, not JSON.
      async handler({ ctx }) {
        const nonce = randomBytes(16).toString('base64');
        const token = String(ctx.params.token);
        setStrictPageHeaders(ctx, nonce);
        ctx.type = 'html';
        try {
          if (!claimTokenParams.safeParse({ token }).success)
            throw new HttpError(404, 'Refund link not found');
          const view = await readRefundClaim(app, token);
          ctx.status = 200;
          ctx.body = renderRefundClaimPage({ view, claimUrl: `/v1/refund-claims/${token}`, nonce });
        } catch (error) {
          if (!(error instanceof HttpError) || ![404, 410].includes(error.statusCode)) throw error;
          ctx.status = error.statusCode;
          ctx.body = renderRefundClaimEndPage({ expired: error.statusCode === 410, nonce });
        }
      },
    }),

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
