import { networkByChainId } from '../../config/networks';
import type { Db } from '../../db/client';
import type { PaymasterClientRow } from '../../db/paymasterClients';
import { hasPositivePrepaidBalance } from '../../db/prepaidLedger';
import type { PaymasterEnvironment, PaymasterGasMode, SponsorshipMode } from '../../db/schema';
import { CLIENT_ID_PATTERN } from './clientIds';
import { PASSED, denied, type CheckOutcome, type PaymasterDenial } from '../rpc/denials';
import { normaliseOrigin } from './origins';

/**
 * The per-client checks both paymaster routes run (JSON-RPC and bundler proxy), each returning a
 * typed outcome instead of throwing, so each route maps a denial to its own error shape.
 */

/** An active paymaster client as the checks see it. */
export interface PaymasterClient {
  /** Row id (UUID), the management routes' path id. */
  id: string;
  /** Publishable `pmc_live_…` / `pmc_test_…` id. */
  clientId: string;
  merchantId: string;
  environment: PaymasterEnvironment;
  allowedOrigins: string[];
  allowedChainIds: number[];
  gasMode: PaymasterGasMode;
  /** The most one user-paid operation may cost its sender (decimal USD); null: the platform default. */
  userPaidMaxOperationUsd: string | null;
}

export function toPaymasterClient(row: PaymasterClientRow): PaymasterClient {
  return {
    id: row.id,
    clientId: row.client_id,
    merchantId: row.merchant_id,
    environment: row.environment,
    allowedOrigins: row.allowed_origins,
    allowedChainIds: row.allowed_chain_ids,
    gasMode: row.gas_mode,
    userPaidMaxOperationUsd: row.user_paid_max_operation_usd,
  };
}

export type AuthenticateClientOutcome =
  { ok: true; client: PaymasterClient } | { ok: false; denial: PaymasterDenial };

/** Finds the active client with a publishable id: the database, or the api's LISTEN/NOTIFY cache of it. */
export type FindActiveClient = (clientId: string) => Promise<PaymasterClientRow | undefined>;

/** The active client for an `X-Client-Id` value; missing, malformed, unknown and revoked ids are denied alike. */
export async function authenticateClient(
  findActiveClient: FindActiveClient,
  clientId: string | undefined,
): Promise<AuthenticateClientOutcome> {
  if (!clientId) return denied('paymaster_unauthorized', 'missing X-Client-Id header');
  // A malformed id cannot exist: deny it without a database round trip.
  const row = CLIENT_ID_PATTERN.test(clientId) ? await findActiveClient(clientId) : undefined;
  if (!row) return denied('paymaster_unauthorized', 'unknown or revoked client id');
  return { ok: true, client: toPaymasterClient(row) };
}

/** With allowedOrigins configured, the request's Origin must be one of them; without, any (or no) origin passes. */
export function checkOrigin(client: PaymasterClient, origin: string | undefined): CheckOutcome {
  if (client.allowedOrigins.length === 0) return PASSED;
  if (!origin)
    return denied(
      'paymaster_origin_not_allowed',
      'this client only accepts requests with an allowed Origin header',
    );
  const normalised = normaliseOrigin(origin);
  if (normalised && client.allowedOrigins.includes(normalised)) return PASSED;
  return denied('paymaster_origin_not_allowed', `origin ${origin} is not in this client's allowedOrigins`);
}

export function checkChainAllowed(client: PaymasterClient, chainId: number): CheckOutcome {
  if (client.allowedChainIds.includes(chainId)) return PASSED;
  return denied('paymaster_chain_not_allowed', `chain ${chainId} is not in this client's allowedChainIds`);
}

/** A `pmc_live_` key covers mainnets only, a `pmc_test_` key testnets only. */
export function checkKeyNetworkClass(client: PaymasterClient, chainId: number): CheckOutcome {
  const network = networkByChainId(chainId);
  if (!network) return denied('paymaster_chain_not_allowed', `chain ${chainId} is not a supported network`);
  if (network.testnet === (client.environment === 'test')) return PASSED;
  return denied(
    'paymaster_key_network_class_mismatch',
    client.environment === 'live'
      ? `a pmc_live_ client cannot be used on the testnet ${network.displayName} (${chainId})`
      : `a pmc_test_ client cannot be used on the mainnet ${network.displayName} (${chainId})`,
  );
}

/** gasMode `sponsored` denies user-paid (token) operations, `user_paid` denies sponsored ones, `both` takes either. */
export function checkGasMode(client: PaymasterClient, mode: SponsorshipMode): CheckOutcome {
  if (client.gasMode === 'both' || client.gasMode === mode) return PASSED;
  return denied(
    'paymaster_gas_mode_not_allowed',
    mode === 'sponsored'
      ? 'this client only allows user-paid gas: send context.token'
      : 'this client only allows merchant-sponsored gas: omit context.token',
  );
}

/** Sponsored operations on mainnets need a positive prepaid gas balance; testnets and user-paid gas do not. */
export async function checkPrepaidBalance(
  db: Db,
  { merchantId, chainId, mode }: { merchantId: string; chainId: number; mode: SponsorshipMode },
): Promise<CheckOutcome> {
  if (mode !== 'sponsored' || networkByChainId(chainId)?.testnet === true) return PASSED;
  if (await hasPositivePrepaidBalance(db, merchantId)) return PASSED;
  return denied(
    'paymaster_billing_balance_exhausted',
    'the prepaid gas balance is exhausted; top it up to sponsor operations on mainnets',
  );
}
