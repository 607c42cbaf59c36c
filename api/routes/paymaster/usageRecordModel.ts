import { z } from 'zod';
import { storedAddressForDisplay } from '../../../chain/storedAddress';
import { normaliseDecimal } from '../../../money/baseUnits';
import type { UsageRecordRow } from '../../../db/paymasterUsage';
import { PAYMASTER_USAGE_STATUSES } from '../../../db/paymasterUsageStatus';

/**
 * The sponsorship usage record as the API shows it (SPEC: Sponsorship usage record), defined once:
 * `GET /v1/paymaster/usage` lists these, and the activity feed's items extend them. Gas figures are
 * wei as decimal strings; the USD snapshot is what the operation was priced at when it was signed.
 */

export const usageRecordFields = {
  id: z.string(),
  clientId: z.string(),
  method: z.string().nullable(),
  chainId: z.number().nullable().describe('Null when the request was refused before its chain could be read'),
  mode: z.enum(['sponsored', 'user_paid']).nullable(),
  status: z.enum(PAYMASTER_USAGE_STATUSES),
  reason: z
    .string()
    .nullable()
    .describe(
      'Short cause of a denial (e.g. undecodable_calldata), or delegated_by:<owner> for a delegated transfer',
    ),
  sender: z.string().nullable(),
  entryPoint: z.string().nullable(),
  userOpHash: z.string().nullable(),
  targets: z.array(z.string()).describe('Every call target of the operation, in order'),
  actualGasCost: z.string().nullable().describe('Gas cost in wei, from the UserOperationEvent'),
  actualGasUsed: z.string().nullable().describe('Gas units, from the UserOperationEvent'),
  usdSnapshot: z
    .object({
      ethUsdPrice: z.string().describe('ETH/USD when the operation was signed'),
      estimatedGasCostWei: z.string().describe('Maximum gas cost the signature allowed, in wei'),
      estimatedCostUsd: z.string().describe('That cost in USD at ethUsdPrice'),
    })
    .nullable()
    .describe('Null for operations that were refused before pricing'),
  policyId: z
    .string()
    .nullable()
    .describe(
      "The client's sponsorship policy that sponsored the operation (first match wins); null before one was chosen",
    ),
  createdAt: z.string(),
};

export const usageRecordSchema = z.object(usageRecordFields).meta({ id: 'PaymasterUsageRecord' });

export type UsageRecordView = z.infer<typeof usageRecordSchema>;

export function toUsageRecord(row: UsageRecordRow): UsageRecordView {
  return {
    id: row.id,
    clientId: row.client_id,
    method: row.method,
    chainId: row.chain_id,
    mode: row.mode,
    status: row.status,
    reason: row.reason,
    sender: row.sender && storedAddressForDisplay(row.sender),
    entryPoint: row.entry_point && storedAddressForDisplay(row.entry_point),
    userOpHash: row.user_op_hash,
    targets: row.targets.map(storedAddressForDisplay),
    actualGasCost: row.actual_gas_cost,
    actualGasUsed: row.actual_gas_used,
    usdSnapshot:
      row.eth_usd_price !== null && row.estimated_gas_cost_wei !== null && row.estimated_cost_usd !== null
        ? {
            ethUsdPrice: normaliseDecimal(row.eth_usd_price),
            estimatedGasCostWei: row.estimated_gas_cost_wei,
            estimatedCostUsd: normaliseDecimal(row.estimated_cost_usd),
          }
        : null,
    policyId: row.policy_id,
    createdAt: row.created_at.toISOString(),
  };
}
