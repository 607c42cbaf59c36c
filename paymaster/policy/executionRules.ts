import type { Address } from 'viem';
import type { DecodedCall, DecodedExecution } from './decodeExecuteCall';
import { PASSED, denied, type CheckOutcome } from '../rpc/denials';

/**
 * The rules a decoded execution must meet regardless of the merchant's policies (SPEC rules 4 and 7):
 * batch calls carry no native value and never call the delegation manager (a delegated transfer is
 * never part of a batch); ERC-7579 SingleDefault is only for a delegated transfer. A single call to the
 * delegation manager passes here: it is a delegated transfer, read and checked by
 * decodeDelegatedTransfer.ts. The first denied call denies the whole operation, named by its index.
 */
export function checkExecutionRules(
  execution: DecodedExecution,
  { delegationManager }: { delegationManager: Address },
): CheckOutcome {
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
      if (sameAddress(call.target, delegationManager)) {
        return denied(
          'paymaster_target_not_allowed',
          `call ${index}: a batch must not contain a delegated transfer (a call to the delegation manager ${call.target}); send it as a single call`,
          'delegated_batch',
        );
      }
    } else if (execution.form === 'erc7579Single' && !sameAddress(call.target, delegationManager)) {
      return denied(
        'paymaster_target_not_allowed',
        `call ${index}: ERC-7579 SingleDefault mode is only for delegated transfers; use BatchDefault mode for direct calls`,
        'unsupported_execution_mode',
      );
    }
  }
  return PASSED;
}

const sameAddress = (a: Address, b: Address) => a.toLowerCase() === b.toLowerCase();

/** The account's call to the delegation manager when the execution is one single call to it (a delegated transfer). */
export function delegatedTransferCall(
  execution: DecodedExecution,
  { delegationManager }: { delegationManager: Address },
): DecodedCall | undefined {
  const single =
    execution.form === 'execute' || execution.form === 'executeTuple' || execution.form === 'erc7579Single';
  const [call] = execution.calls;
  return single && execution.calls.length === 1 && sameAddress(call!.target, delegationManager)
    ? call
    : undefined;
}
