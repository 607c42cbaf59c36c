import { isAddress } from 'viem';
import type { Logger } from '../../logging/logger';
import type { Db } from '../../db/client';
import { ORIGIN_DENIAL_REASON, countMalformedRequest } from '../../db/paymasterMalformedRequests';
import { insertUsageRecord } from '../../db/paymasterUsage';
import type { PaymasterUsageStatus, SponsorshipMode } from '../../db/schema';
import type { PaymasterClient } from '../policy/clientChecks';
import type { UsdSnapshot } from '../limits/limits';
import { USER_OPERATION_METHODS } from '../bundler/bundlerMethods';
import { isPaymasterMethod } from './sponsorshipParams';

/** What a usage row says about a request, as far as the checks got before deciding. */
export interface UsageFacts {
  method: string | null;
  chainId: number | null;
  mode: SponsorshipMode | null;
  /** Lower-case addresses. */
  sender: string | null;
  entryPoint: string | null;
  targets: string[];
  /** The ETH/USD snapshot of the operation, once it was priced (paymaster/limits/limits.ts). */
  usdSnapshot?: UsdSnapshot;
  /** The client's policy that sponsors the operation, once one was chosen (selectSponsorshipPolicy.ts). */
  policyId?: string;
}

export const NO_USAGE_FACTS: UsageFacts = {
  method: null,
  chainId: null,
  mode: null,
  sender: null,
  entryPoint: null,
  targets: [],
};

/** What a usage row's `method` says when the caller named a method we do not serve. */
export const UNKNOWN_METHOD = 'unknown_method';

/**
 * The facts as a usage row may hold them: a method we serve (anything else is `unknown_method`) and
 * addresses only (anything else is null or left out). Usage rows are written by whoever holds a public
 * client id and read by the merchant's AI agent: they never carry the caller's text (security review
 * II, finding 4).
 */
export function factsToStore(facts: UsageFacts): UsageFacts {
  const address = (value: string | null) =>
    value !== null && isAddress(value, { strict: false }) ? value.toLowerCase() : null;
  const { method } = facts;
  return {
    ...facts,
    method:
      method === null || isPaymasterMethod(method) || USER_OPERATION_METHODS.has(method)
        ? method
        : UNKNOWN_METHOD,
    sender: address(facts.sender),
    entryPoint: address(facts.entryPoint),
    targets: facts.targets.flatMap((target) => address(target) ?? []),
  };
}

/**
 * Reasons of a request denied for its shape, before an operation could be read from it. Anyone with
 * the public client id can send these: they are counted per client and hour, not stored as a usage row
 * each (security review II, finding 10). The operation bounds (gas_limit_too_high, gas_price_too_high)
 * are `denied_malformed` too but deny a readable operation: they keep their row.
 */
const MALFORMED_REQUEST_REASONS: ReadonlySet<string> = new Set([
  'parse_error',
  'unknown_method',
  'invalid_params',
  'eip7702_needs_entrypoint_v08',
  'eip7702_delegate_missing',
  'paymaster_gas_fields_missing',
  'paymaster_token_invalid',
  'paymaster_token_unsupported_method',
  'method_not_relayed',
]);

/**
 * Records a paymaster denial (a malformed request, or one refused for its Origin, only adds to its
 * client's hourly counter); failing to write is logged and never changes the caller's answer.
 */
export async function recordPaymasterDenial(
  { db, logger }: { db: Db; logger: Logger },
  client: PaymasterClient,
  facts: UsageFacts,
  status: PaymasterUsageStatus,
  reason: string | null,
): Promise<void> {
  try {
    // An Origin is checked before the body is read: like a malformed request, nothing of an operation to
    // keep, and anyone with the public client id can send it (security review III, finding 4).
    const countedReason =
      status === 'denied_origin'
        ? ORIGIN_DENIAL_REASON
        : status === 'denied_malformed' && reason !== null && MALFORMED_REQUEST_REASONS.has(reason)
          ? reason
          : undefined;
    if (countedReason !== undefined) {
      await countMalformedRequest(db, {
        merchantId: client.merchantId,
        clientId: client.clientId,
        reason: countedReason,
      });
      return;
    }
    await insertUsageRecord(db, {
      merchantId: client.merchantId,
      clientId: client.clientId,
      ...factsToStore(facts),
      status,
      reason,
      userOpHash: null,
    });
  } catch (error) {
    logger.error({ err: error, clientId: client.clientId, status }, 'could not record a paymaster denial');
  }
}
