import { type Address, getAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { DelegationFrameworkContracts } from '../../chain/delegationFramework';
import {
  ExecutionMode,
  type KitDelegation,
  createExecution,
  kitContracts,
  redeemTransfer,
  rootTransferDelegation,
  transferCall,
} from '../../test/delegation/delegatedTransfers';
import { decodeDelegatedTransfer } from './decodeDelegatedTransfer';

/** A made-up framework deployment: the decoder only compares addresses. */
const at = (n: number): Address => getAddress(`0x${n.toString(16).padStart(40, '0')}`);
const FRAMEWORK: DelegationFrameworkContracts = {
  delegationManager: at(0xd0),
  erc20TransferAmountEnforcer: at(0xe1),
  timestampEnforcer: at(0xe2),
  redeemerEnforcer: at(0xe3),
  allowedCalldataEnforcer: at(0xe4),
  valueLteEnforcer: at(0xe5),
  nonceEnforcer: at(0xe6),
  erc20PeriodTransferEnforcer: at(0xe7),
  hybridDeleGatorImpl: at(0xf1),
  simpleFactory: at(0xf2),
};
const NOW = 1_900_000_000;
const SENDER = getAddress(privateKeyToAccount(generatePrivateKey()).address);
const OWNER = getAddress(privateKeyToAccount(generatePrivateKey()).address);
const TOKEN = at(0x70);
const PAYEE = at(0x99);

const grant = (overrides: Partial<Parameters<typeof rootTransferDelegation>[1]> = {}): KitDelegation => ({
  ...rootTransferDelegation(FRAMEWORK, {
    delegator: OWNER,
    delegate: SENDER,
    token: TOKEN,
    allowance: 100n,
    payee: PAYEE,
    expiresAt: NOW + 3600,
    redeemer: SENDER,
    nonce: 0n,
    ...overrides,
  }),
  signature: `0x${'ab'.repeat(65)}`,
});

const decode = (data: `0x${string}`, value = 0n) =>
  decodeDelegatedTransfer({ data, value }, { sender: SENDER, enforcers: FRAMEWORK, now: BigInt(NOW) });
const reasonOf = (data: `0x${string}`, value = 0n) => {
  const outcome = decode(data, value);
  return outcome.ok ? 'accepted' : outcome.denial.reason;
};
const redeem = (delegations: KitDelegation[], amount = 40n, mode?: ExecutionMode) =>
  redeemTransfer({ delegations, token: TOKEN, payee: PAYEE, amount, ...(mode && { mode }) });

describe('decodeDelegatedTransfer (SPEC sponsorship rule 7), on delegations built with MetaMask’s toolkit', () => {
  it('reads one root delegation’s ERC-20 transfer: owner, token, payee, amount, allowance, expiry', () => {
    const outcome = decode(redeem([grant()]));
    expect(outcome).toMatchObject({
      ok: true,
      transfer: { owner: OWNER, token: TOKEN, payee: PAYEE, amount: 40n, allowance: 100n },
    });
    if (outcome.ok) expect(outcome.transfer.expiresAt).toBe(BigInt(NOW + 3600));
    // The whole allowance at once fits; an open delegate (ANY_DELEGATE) bound to the sender by its redeemer caveat too.
    expect(reasonOf(redeem([grant()], 100n))).toBe('accepted');
    expect(reasonOf(redeem([grant({ delegate: '0x0000000000000000000000000000000000000a11' })]))).toBe(
      'accepted',
    );
  });

  const two = (delegation: KitDelegation) =>
    kitContracts.DelegationManager.encode.redeemDelegations({
      delegations: [[delegation], [delegation]],
      modes: [ExecutionMode.SingleDefault, ExecutionMode.SingleDefault],
      executions: [
        [createExecution({ target: TOKEN, callData: transferCall(PAYEE, 1n) })],
        [createExecution({ target: TOKEN, callData: transferCall(PAYEE, 1n) })],
      ],
    });
  const batchExecution = (delegation: KitDelegation) =>
    kitContracts.DelegationManager.encode.redeemDelegations({
      delegations: [[delegation]],
      modes: [ExecutionMode.BatchDefault],
      executions: [
        [
          createExecution({ target: TOKEN, callData: transferCall(PAYEE, 1n) }),
          createExecution({ target: TOKEN, callData: transferCall(PAYEE, 1n) }),
        ],
      ],
    });
  const withCaveats = (caveats: KitDelegation['caveats']) => ({ ...grant(), caveats });

  it.each([
    [
      'native value on the call to the manager',
      () => [redeem([grant()]), 1n] as const,
      'delegation_call_value',
    ],
    [
      'another manager function (disableDelegation)',
      () => [kitContracts.DelegationManager.encode.disableDelegation({ delegation: grant() })] as const,
      'delegation_not_redeem',
    ],
    ['two redemptions in one call', () => [two(grant())] as const, 'delegated_batch'],
    ['redelegation (a chain of two)', () => [redeem([grant(), grant()])] as const, 'delegation_redelegation'],
    ['no delegation (self-authorised)', () => [redeem([])] as const, 'delegation_missing'],
    [
      'a non-root authority',
      () => [redeem([{ ...grant(), authority: `0x${'12'.repeat(32)}` }])] as const,
      'delegation_not_root',
    ],
    [
      'SingleTry mode',
      () => [redeem([grant()], 1n, ExecutionMode.SingleTry)] as const,
      'delegation_execution_mode',
    ],
    ['BatchDefault mode', () => [batchExecution(grant())] as const, 'delegation_execution_mode'],
    [
      'an unrecognised caveat',
      () =>
        [
          redeem([withCaveats([...grant().caveats, { enforcer: at(0xee), terms: '0x', args: '0x' }])]),
        ] as const,
      'delegation_caveats_unrecognised',
    ],
    [
      'a recognised caveat twice',
      () => [redeem([withCaveats([...grant().caveats, grant().caveats[0]!])])] as const,
      'delegation_caveats_unrecognised',
    ],
    [
      'a missing caveat (no nonce)',
      () => [redeem([withCaveats(grant().caveats.slice(0, 5))])] as const,
      'delegation_caveat_missing',
    ],
    ['an expired delegation', () => [redeem([grant({ expiresAt: NOW - 1 })])] as const, 'delegation_expired'],
    ['expiry exactly now', () => [redeem([grant({ expiresAt: NOW })])] as const, 'delegation_expired'],
    ['not valid yet', () => [redeem([grant({ validAfter: NOW + 60 })])] as const, 'delegation_not_yet_valid'],
    [
      'an amount over the allowance',
      () => [redeem([grant()], 101n)] as const,
      'delegation_allowance_exceeded',
    ],
    [
      'a redeemer other than the sender',
      () => [redeem([grant({ redeemer: OWNER })])] as const,
      'delegation_redeemer_not_sender',
    ],
    [
      'a delegate other than the sender',
      () => [redeem([grant({ delegate: OWNER })])] as const,
      'delegation_delegate_not_sender',
    ],
    [
      'a payee other than the bound one',
      () => [redeem([grant({ payee: at(0x98) })])] as const,
      'delegation_payee_mismatch',
    ],
    [
      'another token than the allowance’s',
      () => [redeem([grant({ token: at(0x71) })])] as const,
      'delegation_token_mismatch',
    ],
  ])('refuses %s', (_name, input, reason) => {
    const [data, value] = input();
    expect(reasonOf(data, value ?? 0n)).toBe(reason);
  });

  it('refuses an execution that is not an ERC-20 transfer, or sends native value', () => {
    const execution = (callData: `0x${string}`, value = 0n) =>
      kitContracts.DelegationManager.encode.redeemDelegations({
        delegations: [[grant()]],
        modes: [ExecutionMode.SingleDefault],
        executions: [[createExecution({ target: TOKEN, callData, value })]],
      });
    expect(reasonOf(execution(`0x095ea7b3${'00'.repeat(64)}`))).toBe('delegation_not_erc20_transfer');
    expect(reasonOf(execution(`${transferCall(PAYEE, 1n)}00`))).toBe('delegation_not_erc20_transfer');
    expect(reasonOf(execution(transferCall(PAYEE, 1n), 1n))).toBe('delegation_execution_value');
  });

  it('refuses non-canonical encodings and bytes that decode to nothing', () => {
    const data = redeem([grant()]);
    expect(reasonOf(`${data}00`)).toBe('delegation_undecodable');
    expect(reasonOf(data.slice(0, 200) as `0x${string}`)).toBe('delegation_undecodable');
    expect(reasonOf('0x')).toBe('delegation_undecodable');
  });

  it('refuses caveat terms of the wrong shape (no expiry, non-zero value bound, an offset other than the payee’s)', () => {
    const replaced = (index: number, terms: `0x${string}`) =>
      withCaveats(grant().caveats.map((caveat, at_) => (at_ === index ? { ...caveat, terms } : caveat)));
    expect(reasonOf(redeem([replaced(1, `0x${'00'.repeat(32)}`)]))).toBe('delegation_caveat_terms');
    expect(reasonOf(redeem([replaced(4, `0x${'00'.repeat(31)}01`)]))).toBe('delegation_caveat_terms');
    expect(reasonOf(redeem([replaced(3, `0x${'00'.repeat(31)}24${'00'.repeat(12)}${PAYEE.slice(2)}`)]))).toBe(
      'delegation_caveat_terms',
    );
    expect(reasonOf(redeem([replaced(2, `${SENDER}${OWNER.slice(2)}`)]))).toBe('delegation_caveat_terms');
  });
});
