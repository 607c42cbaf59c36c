import type { Address } from 'viem';
import type { DecodedExecution } from './decodeExecuteCall';
import { PASSED, denied, type CheckOutcome } from './denials';

/**
 * The rules a decoded execution must meet regardless of the merchant's policies (SPEC rule 4):
 * batch calls carry no native value and never target the delegation manager; delegated transfers
 * (rule 7: single executes to the delegation manager, ERC-7579 SingleDefault) are refused.
 * The first refused call refuses the whole operation and is named by its zero-based index.
 */
export function checkExecutionRules(
  execution: DecodedExecution,
  { delegationManager }: { delegationManager: Address },
): CheckOutcome {
  const isDelegationManager = (target: Address) => target.toLowerCase() === delegationManager.toLowerCase();
  const isBatch = execution.form === 'executeBatch' || execution.form === 'erc7579Batch';

  for (const [index, call] of execution.calls.entries()) {
    if (isBatch) {
      if (call.value !== 0n) {
        return denied(
          'paymaster_target_not_allowed',
          `call ${index}: a batch call must carry zero native value, this one sends ${call.value} wei`,
          'batch_call_value',
        );
      }
      if (isDelegationManager(call.target)) {
        return denied(
          'paymaster_target_not_allowed',
          `call ${index}: a batch call must not target the delegation manager ${call.target}`,
          'delegation_manager_target',
        );
      }
    } else if (isDelegationManager(call.target)) {
      return denied(
        'paymaster_target_not_allowed',
        `call ${index}: delegated transfers through the delegation manager ${call.target} are not supported`,
        'delegated_transfer_unsupported',
      );
    } else if (execution.form === 'erc7579Single') {
      return denied(
        'paymaster_target_not_allowed',
        `call ${index}: ERC-7579 SingleDefault mode is not supported for direct calls; use BatchDefault mode`,
        'unsupported_execution_mode',
      );
    }
  }
  return PASSED;
}
