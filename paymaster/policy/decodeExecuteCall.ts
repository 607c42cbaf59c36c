import {
  decodeAbiParameters,
  encodeAbiParameters,
  getAddress,
  parseAbiItem,
  parseAbiParameters,
  toFunctionSelector,
  type AbiFunction,
  type AbiParameter,
  type Address,
  type Hex,
} from 'viem';

/**
 * Reads a smart account's `callData` into the calls it will make (SPEC sponsorship rules 3 and 4).
 * Understood: `execute(address,uint256,bytes)`, `execute((address,uint256,bytes))`,
 * `executeBatch(address[],uint256[],bytes[])` and ERC-7579 `execute(bytes32,bytes)` in BatchDefault
 * mode and SingleDefault (a delegated transfer when its target is the delegation manager, SPEC rule 7;
 * the policy denies it for any other target). Only canonical ABI encoding
 * is accepted: the bytes must equal the re-encoding of what they decode to, so no two byte strings
 * mean the same calls. Pure: what is allowed is decided by the policy checks that follow.
 */

export interface DecodedCall {
  target: Address;
  value: bigint;
  data: Hex;
}

export type ExecutionForm =
  | 'execute'
  | 'executeTuple'
  | 'executeBatch'
  | 'erc7579Batch'
  /** ERC-7579 SingleDefault mode: only ever a delegated transfer through the delegation manager. */
  | 'erc7579Single';

export interface DecodedExecution {
  form: ExecutionForm;
  /** The calls in the order the account makes them. */
  calls: DecodedCall[];
}

export type ExecuteCallDenialReason =
  | 'undecodable_calldata'
  | 'unsupported_execution'
  | 'unsupported_execution_mode'
  | 'non_canonical_encoding'
  | 'batch_size'
  | 'batch_too_large'
  | 'batch_length_mismatch';

export interface ExecuteCallDenial {
  reason: ExecuteCallDenialReason;
  detail: string;
}

export type DecodeExecuteCallOutcome =
  { ok: true; execution: DecodedExecution } | { ok: false; denial: ExecuteCallDenial };

export const MAX_BATCH_CALLS = 16;
export const MAX_BATCH_CALLDATA_BYTES = 32 * 1024;

const EXECUTE = parseAbiItem('function execute(address target, uint256 value, bytes data)');
const EXECUTE_TUPLE = parseAbiItem('function execute((address target, uint256 value, bytes data) call)');
const EXECUTE_BATCH = parseAbiItem(
  'function executeBatch(address[] targets, uint256[] values, bytes[] datas)',
);
const ERC7579_EXECUTE = parseAbiItem('function execute(bytes32 mode, bytes executionCalldata)');
/** SimpleAccount v0.8's tuple-array batch: denied by name (SPEC rule 4). */
const SIMPLE_ACCOUNT_V08_BATCH = parseAbiItem(
  'function executeBatch((address target, uint256 value, bytes data)[] calls)',
);
const ERC7579_EXECUTIONS = parseAbiParameters('(address target, uint256 value, bytes data)[]');

/** ERC-7579 mode word: callType (1) | execType (1) | unused (4) | selector (4) | payload (22). */
export const ERC7579_BATCH_DEFAULT_MODE: Hex = `0x01${'00'.repeat(31)}`;
export const ERC7579_SINGLE_DEFAULT_MODE: Hex = `0x${'00'.repeat(32)}`;

const selectorOf = (item: AbiFunction) => toFunctionSelector(item);
const SELECTORS = {
  execute: selectorOf(EXECUTE),
  executeTuple: selectorOf(EXECUTE_TUPLE),
  executeBatch: selectorOf(EXECUTE_BATCH),
  erc7579Execute: selectorOf(ERC7579_EXECUTE),
  simpleAccountV08Batch: selectorOf(SIMPLE_ACCOUNT_V08_BATCH),
};

const deny = (reason: ExecuteCallDenialReason, detail: string): DecodeExecuteCallOutcome => ({
  ok: false,
  denial: { reason, detail },
});

class NonCanonicalEncoding extends Error {}

/** Decodes `data` as `parameters` and insists it is the canonical encoding of the result. */
function decodeCanonical(parameters: readonly AbiParameter[], data: Hex): readonly unknown[] {
  const values = decodeAbiParameters(parameters, data);
  if (encodeAbiParameters(parameters, values as unknown[]).toLowerCase() !== data.toLowerCase())
    throw new NonCanonicalEncoding();
  return values;
}

/** Runs a decoding step; a failure to decode and a non-canonical encoding become their denials. */
function attempt(what: string, decode: () => DecodeExecuteCallOutcome): DecodeExecuteCallOutcome {
  try {
    return decode();
  } catch (error) {
    if (error instanceof NonCanonicalEncoding)
      return deny('non_canonical_encoding', `${what} is not canonically ABI-encoded`);
    return deny('undecodable_calldata', `${what} cannot be decoded`);
  }
}

const toCall = ({ target, value, data }: { target: string; value: bigint; data: Hex }): DecodedCall => ({
  target: getAddress(target),
  value,
  data,
});

function checkBatchSize(calls: DecodedCall[]): DecodeExecuteCallOutcome | undefined {
  if (calls.length < 1 || calls.length > MAX_BATCH_CALLS) {
    return deny('batch_size', `a batch has 1 to ${MAX_BATCH_CALLS} calls, this one has ${calls.length}`);
  }
  return undefined;
}

function describeMode(mode: Hex): string {
  const callType = mode.slice(2, 4);
  const execType = mode.slice(4, 6);
  const callTypes: Record<string, string> = {
    '00': 'single',
    '01': 'batch',
    fe: 'staticcall',
    ff: 'delegatecall',
  };
  const execTypes: Record<string, string> = { '00': 'default', '01': 'try' };
  return `ERC-7579 mode ${mode} (call type ${callTypes[callType] ?? `0x${callType}`}, exec type ${execTypes[execType] ?? `0x${execType}`})`;
}

const HEX_WORD = 64;
const CANONICAL_BYTES_OFFSET = (3 * 32).toString(16).padStart(HEX_WORD, '0');

/**
 * `execute(address,uint256,bytes)`, the form most operations use, read straight from its words when they
 * are exactly the canonical encoding (zero high bytes in the address word, the bytes at offset 0x60,
 * zero padding, nothing after): the call the general decoder returns, without decoding and re-encoding
 * through viem on every request. Anything else returns undefined and goes through the general decoder,
 * which gives its outcome and its denial as before.
 */
function canonicalSingleExecute(callData: Hex): DecodedCall | undefined {
  const words = callData.slice(10);
  if (words.length < 4 * HEX_WORD || words.length % HEX_WORD !== 0 || !/^[0-9a-fA-F]*$/.test(words))
    return undefined;
  if (!/^0{24}$/.test(words.slice(0, 24))) return undefined;
  if (words.slice(2 * HEX_WORD, 3 * HEX_WORD) !== CANONICAL_BYTES_OFFSET) return undefined;
  const length = BigInt(`0x${words.slice(3 * HEX_WORD, 4 * HEX_WORD)}`);
  const paddedHexLength = Math.ceil(Number(length) / 32) * HEX_WORD;
  if (length > BigInt(words.length) || words.length !== 4 * HEX_WORD + paddedHexLength) return undefined;
  const data = words.slice(4 * HEX_WORD, 4 * HEX_WORD + Number(length) * 2);
  if (!/^0*$/.test(words.slice(4 * HEX_WORD + data.length))) return undefined;
  return {
    target: getAddress(`0x${words.slice(24, HEX_WORD)}`),
    value: BigInt(`0x${words.slice(HEX_WORD, 2 * HEX_WORD)}`),
    data: `0x${data.toLowerCase()}`,
  };
}

/** The calls a user operation's `callData` makes, or why it cannot be sponsored as written. */
export function decodeExecuteCall(callData: Hex): DecodeExecuteCallOutcome {
  if (callData.length < 10)
    return deny('undecodable_calldata', 'callData is shorter than a function selector');
  const selector = callData.slice(0, 10).toLowerCase();
  const args = `0x${callData.slice(10)}` as Hex;
  const byteLength = (callData.length - 2) / 2;

  switch (selector) {
    case SELECTORS.execute: {
      const call = canonicalSingleExecute(callData);
      if (call) return { ok: true, execution: { form: 'execute', calls: [call] } };
      return attempt('execute(address,uint256,bytes)', () => {
        const [target, value, data] = decodeCanonical(EXECUTE.inputs, args) as [Address, bigint, Hex];
        return { ok: true, execution: { form: 'execute', calls: [toCall({ target, value, data })] } };
      });
    }

    case SELECTORS.executeTuple:
      return attempt('execute((address,uint256,bytes))', () => {
        const [call] = decodeCanonical(EXECUTE_TUPLE.inputs, args) as [
          { target: Address; value: bigint; data: Hex },
        ];
        return { ok: true, execution: { form: 'executeTuple', calls: [toCall(call)] } };
      });

    case SELECTORS.executeBatch: {
      if (byteLength > MAX_BATCH_CALLDATA_BYTES) return tooLarge(byteLength);
      return attempt('executeBatch(address[],uint256[],bytes[])', () => {
        const [targets, values, datas] = decodeCanonical(EXECUTE_BATCH.inputs, args) as [
          Address[],
          bigint[],
          Hex[],
        ];
        if (targets.length > 0 && values.length === 0) {
          return deny(
            'batch_length_mismatch',
            'executeBatch with an empty value array is not accepted: give one value per call',
          );
        }
        if (values.length !== targets.length || datas.length !== targets.length) {
          return deny(
            'batch_length_mismatch',
            `executeBatch arrays differ in length: ${targets.length} targets, ${values.length} values, ${datas.length} calldatas`,
          );
        }
        const calls = targets.map((target, index) =>
          toCall({ target, value: values[index]!, data: datas[index]! }),
        );
        return checkBatchSize(calls) ?? { ok: true, execution: { form: 'executeBatch', calls } };
      });
    }

    case SELECTORS.erc7579Execute:
      return attempt('ERC-7579 execute(bytes32,bytes)', () => {
        const [mode, executionCalldata] = decodeCanonical(ERC7579_EXECUTE.inputs, args) as [Hex, Hex];
        if (mode.toLowerCase() === ERC7579_BATCH_DEFAULT_MODE) {
          if (byteLength > MAX_BATCH_CALLDATA_BYTES) return tooLarge(byteLength);
          return attempt('the ERC-7579 batch executions', () => {
            const [executions] = decodeCanonical(ERC7579_EXECUTIONS, executionCalldata) as [
              { target: Address; value: bigint; data: Hex }[],
            ];
            const calls = executions.map(toCall);
            return checkBatchSize(calls) ?? { ok: true, execution: { form: 'erc7579Batch', calls } };
          });
        }
        if (mode.toLowerCase() === ERC7579_SINGLE_DEFAULT_MODE) {
          // Single mode packs target (20) | value (32) | callData, not ABI-encoded.
          if ((executionCalldata.length - 2) / 2 < 52)
            return deny(
              'undecodable_calldata',
              'the ERC-7579 single execution is shorter than target and value',
            );
          const packed = executionCalldata.slice(2);
          const call = toCall({
            target: `0x${packed.slice(0, 40)}`,
            value: BigInt(`0x${packed.slice(40, 104)}`),
            data: `0x${packed.slice(104)}`,
          });
          return { ok: true, execution: { form: 'erc7579Single', calls: [call] } };
        }
        return deny(
          'unsupported_execution_mode',
          `${describeMode(mode)} is not supported: only BatchDefault (0x01 followed by 31 zero bytes), or SingleDefault (32 zero bytes) for a delegated transfer`,
        );
      });

    case SELECTORS.simpleAccountV08Batch:
      return deny(
        'unsupported_execution',
        'executeBatch((address,uint256,bytes)[]) (SimpleAccount v0.8) is not supported',
      );

    default:
      return deny('undecodable_calldata', `function selector ${selector} is not a supported execute call`);
  }
}

function tooLarge(byteLength: number): DecodeExecuteCallOutcome {
  return deny(
    'batch_too_large',
    `a batch has at most ${MAX_BATCH_CALLDATA_BYTES} bytes of callData, this one has ${byteLength}`,
  );
}
