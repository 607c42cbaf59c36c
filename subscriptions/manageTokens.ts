import { createHash, randomBytes } from 'node:crypto';

/**
 * The customer's manage link (issue 42: "the customer cancels from a manage link on the subscribe page"): a
 * random token shown once, in the answer to the subscribe request that created the subscription, and stored
 * only as its SHA-256. Whoever holds the link can see the subscription and cancel it at its period's end,
 * nothing else. A subscribe request sent again (the same signed delegation, public once it was redeemed on
 * chain) never gets a link: only the first answer carries one.
 */

export const MANAGE_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newManageToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: manageTokenHashOf(token) };
}

export const manageTokenHashOf = (token: string) => createHash('sha256').update(token).digest('hex');

export const manageUrlOf = (publicBaseUrl: string, token: string) =>
  `${publicBaseUrl}/subscribe/manage/${token}`;
