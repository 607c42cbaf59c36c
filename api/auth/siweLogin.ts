import { randomBytes } from 'node:crypto';
import { SiweMessage } from 'siwe';
import { getAddress, verifyMessage, type Hex } from 'viem';
import { z } from 'zod';
import type { PublicClients } from '../../chain/publicClients';

/** Sign-In with Ethereum (EIP-4361): the payload we issue and the checks we make on its signature. */

export const LOGIN_TTL_MS = 10 * 60 * 1000;
const STATEMENT = 'Sign in to the merchant dashboard with this wallet.';

export const loginPayloadSchema = z
  .object({
    domain: z.string(),
    address: z.string(),
    statement: z.string(),
    uri: z.string(),
    version: z.literal('1'),
    chainId: z.number().int().positive(),
    nonce: z.string().regex(/^[A-Za-z0-9]{8,}$/),
    issuedAt: z.string(),
    expirationTime: z.string(),
  })
  .strict();

export type LoginPayload = z.infer<typeof loginPayloadSchema>;

/**
 * What verify accepts (docs/decisions.md "Merchant accounts"): the object login-payload answered, as it is — its `message`
 * included, which must then be exactly the text rebuilt from the fields — or the same without `message`.
 */
const signedLoginPayloadSchema = loginPayloadSchema.extend({ message: z.string().optional() }).strict();

/** Builds the payload and the exact text to sign for `address` on `chainId`. */
export function createLoginPayload({
  address,
  chainId,
  publicBaseUrl,
  now,
}: {
  address: string;
  chainId: number;
  publicBaseUrl: string;
  now: Date;
}): LoginPayload & { message: string } {
  const payload: LoginPayload = {
    domain: new URL(publicBaseUrl).host,
    address: getAddress(address),
    statement: STATEMENT,
    uri: publicBaseUrl,
    version: '1',
    chainId,
    nonce: randomBytes(16).toString('hex'),
    issuedAt: now.toISOString(),
    expirationTime: new Date(now.getTime() + LOGIN_TTL_MS).toISOString(),
  };
  return { ...payload, message: loginMessage(payload) };
}

/** The EIP-4361 text for a payload; the server rebuilds it from the fields instead of trusting a client string. */
export function loginMessage(payload: LoginPayload): string {
  return new SiweMessage({ ...payload }).prepareMessage();
}

export type LoginCheckFailure =
  'malformed_payload' | 'message_mismatch' | 'wrong_domain' | 'expired' | 'unusable_nonce' | 'bad_signature';

/**
 * Checks everything about a signed payload except consuming the nonce (which the caller does
 * atomically): fields (and `message` against the rebuilt text), domain and URI, expiry, that the nonce
 * is still usable — before the signature, whose check may cost an RPC call — and the signature: ECDSA
 * for wallets, ERC-1271 for deployed contract wallets and ERC-6492 for counterfactual ones, through the
 * chain's RPC when configured.
 */
export async function checkSignedLoginPayload({
  payload,
  signature,
  publicBaseUrl,
  now,
  publicClients,
  nonceUsable,
}: {
  payload: unknown;
  signature: string;
  publicBaseUrl: string;
  now: Date;
  publicClients: PublicClients;
  nonceUsable: (payload: LoginPayload) => Promise<boolean>;
}): Promise<{ ok: true; payload: LoginPayload } | { ok: false; failure: LoginCheckFailure }> {
  const parsed = signedLoginPayloadSchema.safeParse(payload);
  if (!parsed.success || !/^0x[0-9a-fA-F]+$/.test(signature))
    return { ok: false, failure: 'malformed_payload' };
  const { message: sentMessage, ...fields } = parsed.data;
  let message: string;
  let address: Hex;
  try {
    address = getAddress(fields.address);
    message = loginMessage({ ...fields, address });
  } catch {
    return { ok: false, failure: 'malformed_payload' };
  }
  if (sentMessage !== undefined && sentMessage !== message) return { ok: false, failure: 'message_mismatch' };
  if (fields.domain !== new URL(publicBaseUrl).host || fields.uri !== publicBaseUrl) {
    return { ok: false, failure: 'wrong_domain' };
  }
  const expiresAt = Date.parse(fields.expirationTime);
  if (!Number.isFinite(expiresAt) || expiresAt <= now.getTime()) return { ok: false, failure: 'expired' };
  if (!(await nonceUsable({ ...fields, address }))) return { ok: false, failure: 'unusable_nonce' };

  const client = publicClients.forChain(fields.chainId);
  let valid: boolean;
  try {
    valid = client
      ? await client.verifyMessage({ address, message, signature: signature as Hex })
      : await verifyMessage({ address, message, signature: signature as Hex });
  } catch {
    valid = false;
  }
  return valid ? { ok: true, payload: { ...fields, address } } : { ok: false, failure: 'bad_signature' };
}
