import type { Address } from 'viem';
import type { DecodedExecution } from './decodeExecuteCall';
import { checkExecutionRules } from './executionRules';

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
          detail: expect.stringMatching(/^call 1: .*delegation manager/),
          reason: 'delegation_manager_target',
        },
      });
    },
  );

  it.each(['execute', 'executeTuple', 'erc7579Single'] as const)(
    '%s to the delegation manager (a delegated transfer) is refused',
    (form) => {
      expect(check({ form, calls: [call(DELEGATION_MANAGER)] })).toEqual({
        ok: false,
        denial: {
          code: 'paymaster_target_not_allowed',
          detail: expect.stringMatching(/^call 0: delegated transfers/),
          reason: 'delegated_transfer_unsupported',
        },
      });
    },
  );

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
    expect(checkExecutionRules({ form: 'execute', calls: [call(A)] }, { delegationManager: A }).ok).toBe(
      false,
    );
    expect(
      checkExecutionRules({ form: 'execute', calls: [call(DELEGATION_MANAGER)] }, { delegationManager: A })
        .ok,
    ).toBe(true);
  });
});
