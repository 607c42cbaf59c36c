import type { Address } from 'viem';
import type { DecodedExecution } from './decodeExecuteCall';
import { checkExecutionRules, delegatedTransferCall } from './executionRules';

const DELEGATION_MANAGER: Address = '0xdb9B1e94B5b69Df7e401DDbedE43491141047dB3';
const A: Address = '0x1111111111111111111111111111111111111111';
const call = (target: Address, value = 0n) => ({ target, value, data: '0x' as const });
const check = (execution: DecodedExecution) =>
  checkExecutionRules(execution, { delegationManager: DELEGATION_MANAGER });

describe('checkExecutionRules', () => {
  it('passes batches of zero-value calls to ordinary targets, and single calls with value', () => {
    expect(check({ form: 'executeBatch', calls: [call(A), call(A)] })).toEqual({ ok: true });
    expect(check({ form: 'erc7579Batch', calls: [call(A)] })).toEqual({ ok: true });
    expect(check({ form: 'execute', calls: [call(A, 10n)] })).toEqual({ ok: true });
    expect(check({ form: 'executeTuple', calls: [call(A, 10n)] })).toEqual({ ok: true });
  });

  it.each(['executeBatch', 'erc7579Batch'] as const)(
    '%s: a call with native value is refused by its index',
    (form) => {
      expect(check({ form, calls: [call(A), call(A), call(A, 1n)] })).toEqual({
        ok: false,
        denial: {
          code: 'paymaster_target_not_allowed',
          detail: expect.stringMatching(/^call 2: .*zero native value.*1 wei/),
          reason: 'batch_call_value',
        },
      });
    },
  );

  it.each(['executeBatch', 'erc7579Batch'] as const)(
    '%s: a call to the delegation manager (any case) is refused by its index',
    (form) => {
      expect(check({ form, calls: [call(A), call(DELEGATION_MANAGER.toLowerCase() as Address)] })).toEqual({
        ok: false,
        denial: {
          code: 'paymaster_target_not_allowed',
          detail: expect.stringMatching(/^call 1: a batch must not contain a delegated transfer/),
          reason: 'delegated_batch',
        },
      });
    },
  );

  it.each(['execute', 'executeTuple', 'erc7579Single'] as const)(
    '%s to the delegation manager passes here: it is a delegated transfer, read by decodeDelegatedTransfer',
    (form) => {
      expect(check({ form, calls: [call(DELEGATION_MANAGER)] })).toEqual({ ok: true });
      expect(
        delegatedTransferCall(
          { form, calls: [call(DELEGATION_MANAGER)] },
          { delegationManager: DELEGATION_MANAGER },
        ),
      ).toEqual(call(DELEGATION_MANAGER));
    },
  );

  it('finds no delegated transfer in a batch or in a single call elsewhere', () => {
    const options = { delegationManager: DELEGATION_MANAGER };
    expect(
      delegatedTransferCall({ form: 'executeBatch', calls: [call(DELEGATION_MANAGER)] }, options),
    ).toBeUndefined();
    expect(delegatedTransferCall({ form: 'execute', calls: [call(A)] }, options)).toBeUndefined();
  });

  it('refuses ERC-7579 SingleDefault mode to an ordinary target', () => {
    expect(check({ form: 'erc7579Single', calls: [call(A)] })).toEqual({
      ok: false,
      denial: {
        code: 'paymaster_target_not_allowed',
        detail: expect.stringContaining('SingleDefault'),
        reason: 'unsupported_execution_mode',
      },
    });
  });

  it('uses the delegation manager it is given (per-chain configuration)', () => {
    const batch = { form: 'executeBatch' as const, calls: [call(A)] };
    expect(checkExecutionRules(batch, { delegationManager: A }).ok).toBe(false);
    expect(checkExecutionRules(batch, { delegationManager: DELEGATION_MANAGER }).ok).toBe(true);
  });
});
