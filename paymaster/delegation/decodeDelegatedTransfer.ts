import {
  decodeAbiParameters,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  hexToBigInt,
  parseAbiParameters,
  type Address,
  type Hex,
} from 'viem';
import type { DelegationFrameworkContracts } from '../../chain/delegationFramework';
import {
  ROOT_AUTHORITY,
  SINGLE_DEFAULT_MODE,
  delegationManagerAbi,
  type Delegation,
} from '../../chain/delegations';

/**
 * Reads the `redeemDelegations` call a user operation makes to the delegation manager as a delegated
 * ERC-20 transfer (SPEC sponsorship rule 7, docs/paymaster.md "Delegated transfers (SPEC sponsorship rule 7)"), or says why it is not one we sponsor. Accepted:
 * exactly one permission context holding exactly one root delegation, one SingleDefault execution of
 * ERC-20 `transfer(payee, amount)` without native value, and the root delegation's caveats exactly the
 * recognised set, each once and without redeemer-supplied args: ERC20TransferAmountEnforcer (the token and an allowance the amount fits),
 * TimestampEnforcer (an expiry not passed), RedeemerEnforcer (the sender alone), AllowedCalldataEnforcer
 * on the transfer's recipient word (the payee), ValueLteEnforcer (0) and NonceEnforcer. Every encoding
 * must be canonical. Pure: the owner's signature is checked on the chain afterwards
 * (verifyDelegationSignature.ts).
 */

export type DelegatedTransferDenialReason =
  | 'delegation_call_value'
  | 'delegation_undecodable'
  | 'delegation_not_redeem'
  | 'delegated_batch'
  | 'delegation_missing'
  | 'delegation_redelegation'
  | 'delegation_not_root'
  | 'delegation_delegate_not_sender'
  | 'delegation_execution_mode'
  | 'delegation_not_erc20_transfer'
  | 'delegation_execution_value'
  | 'delegation_caveats_unrecognised'
  | 'delegation_caveat_missing'
  | 'delegation_caveat_terms'
  | 'delegation_token_mismatch'
  | 'delegation_payee_mismatch'
  | 'delegation_expired'
  | 'delegation_not_yet_valid'
  | 'delegation_allowance_exceeded'
  | 'delegation_redeemer_not_sender';

export interface DelegatedTransferDenial {
  reason: DelegatedTransferDenialReason;
  detail: string;
}

/** A delegated transfer we may sponsor, once the owner's signature verifies on the chain. */
export interface DelegatedTransfer {
  /** The delegator: the account whose tokens move (the "original owner" of SPEC rule 7). */
  owner: Address;
  delegation: Delegation;
  token: Address;
  payee: Address;
  amount: bigint;
  allowance: bigint;
  /** Unix seconds: the TimestampEnforcer reverts the transfer from this moment on. */
  expiresAt: bigint;
}

export type DecodeDelegatedTransferOutcome =
  { ok: true; transfer: DelegatedTransfer } | { ok: false; denial: DelegatedTransferDenial };

export type CaveatEnforcers = Pick<
  DelegationFrameworkContracts,
  | 'erc20TransferAmountEnforcer'
  | 'timestampEnforcer'
  | 'redeemerEnforcer'
  | 'allowedCalldataEnforcer'
  | 'valueLteEnforcer'
  | 'nonceEnforcer'
>;

/** The recognised caveats, by our name of their enforcer. */
const RECOGNISED_CAVEATS = [
  'erc20TransferAmountEnforcer',
  'timestampEnforcer',
  'redeemerEnforcer',
  'allowedCalldataEnforcer',
  'valueLteEnforcer',
  'nonceEnforcer',
] as const satisfies readonly (keyof CaveatEnforcers)[];
type RecognisedCaveat = (typeof RECOGNISED_CAVEATS)[number];

/** Redeemer-supplied caveat args these enforcers ignore: none, or the single zero byte MetaMask's toolkit writes. */
const NO_ARGS = ['0x', '0x00'];
/** The manager's ANY_DELEGATE: anyone may redeem (the RedeemerEnforcer still binds the sender). */
const ANY_DELEGATE = '0x0000000000000000000000000000000000000a11';
/** AllowedCalldataEnforcer's offset of the recipient word in `transfer(address,uint256)` call data. */
const TRANSFER_RECIPIENT_OFFSET = 4n;
const TRANSFER_CALLDATA_BYTES = 4 + 32 + 32;

const DELEGATIONS = parseAbiParameters(
  '(address delegate, address delegator, bytes32 authority, (address enforcer, bytes terms, bytes args)[] caveats, uint256 salt, bytes signature)[]',
);

/** A decoding step's denial (also a whole outcome's). */
type Denied = { ok: false; denial: DelegatedTransferDenial };

const deny = (reason: DelegatedTransferDenialReason, detail: string): Denied => ({
  ok: false,
  denial: { reason, detail },
});

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
const byteLength = (hex: Hex) => (hex.length - 2) / 2;

export interface DecodeDelegatedTransferContext {
  /** The user operation's sender: the only account allowed to redeem. */
  sender: Address;
  enforcers: CaveatEnforcers;
  /** Unix seconds of the policy's clock. */
  now: bigint;
}

/**
 * The delegated transfer that `data` (the account's call to the delegation manager, with `value`)
 * redeems: the call, its one redemption, the root delegation, the transfer it executes, the caveats'
 * terms, then the transfer against those terms. The first step that fails names the denial.
 */
export function decodeDelegatedTransfer(
  call: { data: Hex; value: bigint },
  context: DecodeDelegatedTransferContext,
): DecodeDelegatedTransferOutcome {
  const redeem = readRedeemCall(call);
  if (!redeem.ok) return redeem;
  const redemption = readSingleRedemption(redeem.args);
  if (!redemption.ok) return redemption;
  const root = readRootDelegation(redemption.permissionContext, context.sender);
  if (!root.ok) return root;
  const { delegation } = root;
  const transfer = readTransferExecution(redemption.execution);
  if (!transfer.ok) return transfer;

  const caveats = caveatsByEnforcer(delegation, context.enforcers);
  if (!caveats.ok) return caveats;
  const terms = readTransferTerms(caveats.terms, transfer.token);
  if (!terms.ok) return terms;
  const within = checkWithinTerms(transfer, terms, context);
  if (within) return within;

  return {
    ok: true,
    transfer: {
      owner: getAddress(delegation.delegator),
      delegation: {
        ...delegation,
        delegate: getAddress(delegation.delegate),
        delegator: getAddress(delegation.delegator),
        caveats: delegation.caveats.map((caveat) => ({ ...caveat, enforcer: getAddress(caveat.enforcer) })),
      },
      token: transfer.token,
      payee: terms.boundPayee,
      amount: transfer.amount,
      allowance: terms.allowance,
      expiresAt: terms.expiresAt,
    },
  };
}

type RedeemArgs = readonly [readonly Hex[], readonly Hex[], readonly Hex[]];

/** The call to the manager: no native value, `redeemDelegations`, canonically encoded. */
function readRedeemCall({
  data,
  value,
}: {
  data: Hex;
  value: bigint;
}): { ok: true; args: RedeemArgs } | Denied {
  if (value !== 0n)
    return deny(
      'delegation_call_value',
      `the call to the delegation manager sends ${value} wei; it must send none`,
    );
  try {
    const decoded = decodeFunctionData({ abi: delegationManagerAbi, data });
    if (decoded.functionName !== 'redeemDelegations') {
      return deny(
        'delegation_not_redeem',
        `${decoded.functionName} on the delegation manager is not sponsored; only redeemDelegations is`,
      );
    }
    const args = decoded.args as RedeemArgs;
    const reencoded = encodeFunctionData({
      abi: delegationManagerAbi,
      functionName: 'redeemDelegations',
      args: args as [Hex[], Hex[], Hex[]],
    });
    if (!same(reencoded, data))
      return deny('delegation_undecodable', 'redeemDelegations is not canonically ABI-encoded');
    return { ok: true, args };
  } catch {
    return deny('delegation_undecodable', 'the call to the delegation manager cannot be decoded');
  }
}

/** Exactly one execution under one permission context, in SingleDefault mode. */
function readSingleRedemption([contexts, modes, executions]: RedeemArgs):
  { ok: true; permissionContext: Hex; execution: Hex } | Denied {
  if (contexts.length !== 1 || modes.length !== 1 || executions.length !== 1) {
    return deny(
      'delegated_batch',
      `redeemDelegations must redeem exactly one execution under one permission context; this one has ${contexts.length} contexts, ${modes.length} modes, ${executions.length} executions`,
    );
  }
  if (!same(modes[0]!, SINGLE_DEFAULT_MODE)) {
    return deny(
      'delegation_execution_mode',
      `the redeemed execution's mode ${modes[0]} is not SingleDefault (32 zero bytes)`,
    );
  }
  return { ok: true, permissionContext: contexts[0]!, execution: executions[0]! };
}

/** The permission context: one root delegation (no redelegation), to the sender or to anyone. */
function readRootDelegation(
  permissionContext: Hex,
  sender: Address,
): { ok: true; delegation: Delegation } | Denied {
  let delegations: readonly Delegation[];
  try {
    const [decoded] = decodeAbiParameters(DELEGATIONS, permissionContext);
    if (!same(encodeAbiParameters(DELEGATIONS, [decoded]), permissionContext))
      return deny('delegation_undecodable', 'the permission context is not canonically ABI-encoded');
    delegations = decoded as readonly Delegation[];
  } catch {
    return deny('delegation_undecodable', 'the permission context cannot be decoded as delegations');
  }
  if (delegations.length === 0)
    return deny(
      'delegation_missing',
      'the permission context holds no delegation (self-authorised execution)',
    );
  if (delegations.length > 1) {
    return deny(
      'delegation_redelegation',
      `the permission context is a chain of ${delegations.length} delegations; only one root delegation is sponsored`,
    );
  }
  const delegation = delegations[0]!;
  if (!same(delegation.authority, ROOT_AUTHORITY)) {
    return deny(
      'delegation_not_root',
      `the delegation's authority ${delegation.authority} is not the root authority`,
    );
  }
  if (!same(delegation.delegate, sender) && !same(delegation.delegate, ANY_DELEGATE)) {
    return deny(
      'delegation_delegate_not_sender',
      `the delegation's delegate ${delegation.delegate} is not the sender ${sender}`,
    );
  }
  return { ok: true, delegation };
}

/** The execution: token (20) ‖ value (32) ‖ transfer(payee, amount), canonical, sending no native value. */
function readTransferExecution(
  execution: Hex,
): { ok: true; token: Address; payee: Address; amount: bigint } | Denied {
  if (byteLength(execution) !== 20 + 32 + TRANSFER_CALLDATA_BYTES) {
    return deny(
      'delegation_not_erc20_transfer',
      'the redeemed execution is not one ERC-20 transfer(address,uint256) call',
    );
  }
  const token = getAddress(`0x${execution.slice(2, 42)}`);
  const executionValue = hexToBigInt(`0x${execution.slice(42, 106)}`);
  const callData = `0x${execution.slice(106)}` as Hex;
  let payee: Address;
  let amount: bigint;
  try {
    const transfer = decodeFunctionData({ abi: erc20Abi, data: callData });
    if (transfer.functionName !== 'transfer') throw new Error('not a transfer');
    [payee, amount] = transfer.args as [Address, bigint];
    if (
      !same(encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [payee, amount] }), callData)
    )
      throw new Error('not canonical');
  } catch {
    return deny(
      'delegation_not_erc20_transfer',
      'the redeemed execution is not one canonically encoded ERC-20 transfer(address,uint256) call',
    );
  }
  if (executionValue !== 0n) {
    return deny(
      'delegation_execution_value',
      `the redeemed execution sends ${executionValue} wei; a delegated transfer sends none`,
    );
  }
  return { ok: true, token, payee, amount };
}

interface TransferTerms {
  allowance: bigint;
  validAfter: bigint;
  expiresAt: bigint;
  redeemer: Address;
  boundPayee: Address;
}

/** Each recognised caveat's terms, in their exact encoding, for a transfer of `token`. */
function readTransferTerms(
  terms: Record<RecognisedCaveat, Hex>,
  token: Address,
): ({ ok: true } & TransferTerms) | Denied {
  // ERC20TransferAmountEnforcer: token (20) ‖ allowance (32).
  if (byteLength(terms.erc20TransferAmountEnforcer) !== 52)
    return badTerms('ERC20TransferAmountEnforcer', 'token (20 bytes) and allowance (32 bytes)');
  const allowedToken = getAddress(`0x${terms.erc20TransferAmountEnforcer.slice(2, 42)}`);
  const allowance = hexToBigInt(`0x${terms.erc20TransferAmountEnforcer.slice(42)}`);
  if (allowedToken !== token) {
    return deny(
      'delegation_token_mismatch',
      `the transfer is of token ${token}; the delegation allows token ${allowedToken}`,
    );
  }

  // TimestampEnforcer: valid after (uint128) ‖ valid before (uint128); an expiry is required.
  if (byteLength(terms.timestampEnforcer) !== 32)
    return badTerms('TimestampEnforcer', 'valid after and valid before (uint128 each)');
  const validAfter = hexToBigInt(`0x${terms.timestampEnforcer.slice(2, 34)}`);
  const expiresAt = hexToBigInt(`0x${terms.timestampEnforcer.slice(34)}`);
  if (expiresAt === 0n)
    return badTerms('TimestampEnforcer', 'a non-zero valid-before bound (the delegation must expire)');

  // RedeemerEnforcer: the redeemers, 20 bytes each; exactly the sender.
  if (byteLength(terms.redeemerEnforcer) !== 20)
    return badTerms('RedeemerEnforcer', 'exactly one redeemer (20 bytes)');
  const redeemer = getAddress(terms.redeemerEnforcer);

  // AllowedCalldataEnforcer: offset 4 (uint256) ‖ the recipient word: binds the payee.
  if (byteLength(terms.allowedCalldataEnforcer) !== 64)
    return badTerms('AllowedCalldataEnforcer', 'offset 4 and the payee word of transfer(address,uint256)');
  const offset = hexToBigInt(`0x${terms.allowedCalldataEnforcer.slice(2, 66)}`);
  const payeeWord = `0x${terms.allowedCalldataEnforcer.slice(66)}` as Hex;
  if (offset !== TRANSFER_RECIPIENT_OFFSET || !/^0x0{24}/.test(payeeWord))
    return badTerms('AllowedCalldataEnforcer', 'offset 4 and the payee word of transfer(address,uint256)');
  const boundPayee = getAddress(`0x${payeeWord.slice(26)}`);

  // ValueLteEnforcer: 0; NonceEnforcer: a uint256 (compared with the chain's nonce at redemption).
  if (byteLength(terms.valueLteEnforcer) !== 32 || hexToBigInt(terms.valueLteEnforcer) !== 0n)
    return badTerms('ValueLteEnforcer', 'a maximum native value of 0');
  if (byteLength(terms.nonceEnforcer) !== 32) return badTerms('NonceEnforcer', 'a nonce (uint256)');
  return { ok: true, allowance, validAfter, expiresAt, redeemer, boundPayee };
}

/** The transfer within its terms: the bound payee, the sender as redeemer, the window, the allowance. */
function checkWithinTerms(
  { payee, amount }: { payee: Address; amount: bigint },
  { boundPayee, redeemer, expiresAt, validAfter, allowance }: TransferTerms,
  context: DecodeDelegatedTransferContext,
): Denied | undefined {
  if (boundPayee !== getAddress(payee)) {
    return deny(
      'delegation_payee_mismatch',
      `the transfer pays ${getAddress(payee)}; the delegation binds the payee ${boundPayee}`,
    );
  }
  if (redeemer !== getAddress(context.sender)) {
    return deny(
      'delegation_redeemer_not_sender',
      `the delegation's redeemer ${redeemer} is not the sender ${getAddress(context.sender)}`,
    );
  }
  if (expiresAt <= context.now) {
    return deny(
      'delegation_expired',
      `the delegation expired at ${new Date(Number(expiresAt) * 1000).toISOString()}`,
    );
  }
  if (validAfter >= context.now) {
    return deny(
      'delegation_not_yet_valid',
      `the delegation is valid only after ${new Date(Number(validAfter) * 1000).toISOString()}`,
    );
  }
  if (amount > allowance) {
    return deny(
      'delegation_allowance_exceeded',
      `the transfer of ${amount} base units is over the delegation's allowance of ${allowance}`,
    );
  }
  return undefined;
}

function badTerms(enforcer: string, expected: string): Denied {
  return deny('delegation_caveat_terms', `the ${enforcer} caveat's terms must be ${expected}`);
}

/**
 * The terms of each recognised caveat: every caveat's enforcer must be one of the six, each present
 * exactly once, with no redeemer-supplied args (none of them reads any).
 */
function caveatsByEnforcer(
  delegation: Delegation,
  enforcers: CaveatEnforcers,
): { ok: true; terms: Record<RecognisedCaveat, Hex> } | Denied {
  const terms: Partial<Record<RecognisedCaveat, Hex>> = {};
  for (const [index, caveat] of delegation.caveats.entries()) {
    const name = RECOGNISED_CAVEATS.find((candidate) => same(enforcers[candidate], caveat.enforcer));
    if (!name) {
      return {
        ok: false,
        denial: {
          reason: 'delegation_caveats_unrecognised',
          detail: `caveat ${index}: enforcer ${caveat.enforcer} is not one of the recognised transfer caveats`,
        },
      };
    }
    if (terms[name] !== undefined) {
      return {
        ok: false,
        denial: {
          reason: 'delegation_caveats_unrecognised',
          detail: `caveat ${index}: the ${name} caveat appears twice`,
        },
      };
    }
    if (!NO_ARGS.includes(caveat.args.toLowerCase())) {
      return {
        ok: false,
        denial: {
          reason: 'delegation_caveats_unrecognised',
          detail: `caveat ${index}: the ${name} caveat carries args ${caveat.args.slice(0, 18)}; the transfer caveats read none (0x or the toolkit's 0x00)`,
        },
      };
    }
    terms[name] = caveat.terms;
  }
  const missing = RECOGNISED_CAVEATS.filter((name) => terms[name] === undefined);
  if (missing.length > 0) {
    return {
      ok: false,
      denial: {
        reason: 'delegation_caveat_missing',
        detail: `the root delegation lacks the caveats ${missing.join(', ')} (allowance, expiry, redeemer, payee, zero value, nonce)`,
      },
    };
  }
  return { ok: true, terms: terms as Record<RecognisedCaveat, Hex> };
}
