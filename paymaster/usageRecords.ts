import type { Logger } from '../logging/logger';
import type { Db } from '../db/client';
import { insertUsageRecord } from '../db/paymasterUsage';
import type { PaymasterUsageStatus, SponsorshipMode } from '../db/schema';
import type { PaymasterClient } from './clientChecks';
import type { UsdSnapshot } from './limits';

/** What a usage row says about a request, as far as the checks got before deciding. */
export interface UsageFacts {
  method: string | null;
  chainId: number | null;
  mode: SponsorshipMode | null;
  /** Lower-case addresses. */
  sender: string | null;
  entryPoint: string | null;
  targets: string[];
  /** The ETH/USD snapshot of the operation, once it was priced (paymaster/limits.ts). */
  usdSnapshot?: UsdSnapshot;
}

export const NO_USAGE_FACTS: UsageFacts = {
  method: null,
  chainId: null,
  mode: null,
  sender: null,
  entryPoint: null,
  targets: [],
};

/** Records a paymaster denial; failing to write the row is logged and never changes the caller's answer. */
export async function recordPaymasterDenial(
  { db, logger }: { db: Db; logger: Logger },
  client: PaymasterClient,
  facts: UsageFacts,
  status: PaymasterUsageStatus,
  reason: string | null,
): Promise<void> {
  try {
    await insertUsageRecord(db, {
      merchantId: client.merchantId,
      clientId: client.clientId,
      ...facts,
      status,
      reason,
      userOpHash: null,
    });
  } catch (error) {
    logger.error({ err: error, clientId: client.clientId, status }, 'could not record a paymaster denial');
  }
}
