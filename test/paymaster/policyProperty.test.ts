import fc from 'fast-check';
import {
  bytesToHex,
  decodeAbiParameters,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  hexToBytes,
  parseAbi,
  parseAbiParameters,
  type Address,
  type Hex,
} from 'viem';
import { ENTRY_POINT_V07_ADDRESS } from '../../chain/entryPoints';
import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { addDenyRule, allowContract, createPaymasterClient, paymasterRpc } from './paymasterApi';

/**
 * Properties of the callData decoder and the sponsorship policy, through the real HTTP route:
 * paymaster data comes back only when the callData is a canonical supported execution whose every
 * target is allowlisted and none is blocked (and the sender is not blocked); for generated,
 * unmutated executions that condition is also sufficient; and no input whatsoever produces a 500.
 */

const accountAbi = parseAbi([
  'function execute(address target, uint256 value, bytes data)',
  'function execute((address target, uint256 value, bytes data) call)',
  'function executeBatch(address[] targets, uint256[] values, bytes[] datas)',
  'function executeBatch((address target, uint256 value, bytes data)[] calls)',
  'function execute(bytes32 mode, bytes executionCalldata)',
]);
const executionsAbi = parseAbiParameters('(address target, uint256 value, bytes data)[]');
const BATCH_DEFAULT: Hex = `0x01${'00'.repeat(31)}`;
const SINGLE_DEFAULT: Hex = `0x${'00'.repeat(32)}`;
const CHAIN_ID = 84532;

const ALLOWED: Address[] = [
  getAddress('0xa000000000000000000000000000000000000001'),
  getAddress('0xa000000000000000000000000000000000000002'),
];
const DENIED_TARGET = getAddress('0xd000000000000000000000000000000000000001'); // allowlisted and blocked
const UNLISTED = getAddress('0xb000000000000000000000000000000000000001');
/** The local chain's delegation manager (from the deployments file): allowlisted; arbitrary calls to it are no delegated transfer (SPEC rule 7), so refused. */
const DELEGATION_MANAGER: Address = testStack().chains.find((chain) => chain.chainId === CHAIN_ID)!.contracts
  .delegationManager!;
const SENDER: Address = '0x5000000000000000000000000000000000000001';
const DENIED_SENDER: Address = '0x5000000000000000000000000000000000000002';

const allowlisted = new Set(
  [...ALLOWED, DENIED_TARGET, DELEGATION_MANAGER].map((address) => address.toLowerCase()),
);
const denied = new Set([DENIED_TARGET.toLowerCase()]);

interface Call {
  target: Address;
  value: bigint;
  data: Hex;
}
type Execution =
  | { form: 'execute' | 'executeTuple'; calls: Call[] }
  | { form: 'executeBatch'; calls: Call[]; valuesLength: number }
  | { form: 'erc7579'; calls: Call[]; mode: Hex }
  | { form: 'erc7579Single'; calls: Call[] }
  | { form: 'simpleAccountV08Batch'; calls: Call[] }
  | { form: 'random'; bytes: Hex };

const callArbitrary: fc.Arbitrary<Call> = fc.record({
  target: fc.constantFrom(...ALLOWED, DENIED_TARGET, UNLISTED, DELEGATION_MANAGER),
  value: fc.oneof(
    { weight: 6, arbitrary: fc.constant(0n) },
    { weight: 1, arbitrary: fc.bigInt(1n, 10n ** 18n) },
  ),
  data: fc.uint8Array({ maxLength: 48 }).map((bytes) => bytesToHex(bytes)),
});
const calls = (minLength: number, maxLength: number) => fc.array(callArbitrary, { minLength, maxLength });

const executionArbitrary: fc.Arbitrary<Execution> = fc.oneof(
  { weight: 3, arbitrary: callArbitrary.map((call): Execution => ({ form: 'execute', calls: [call] })) },
  { weight: 2, arbitrary: callArbitrary.map((call): Execution => ({ form: 'executeTuple', calls: [call] })) },
  {
    weight: 4,
    arbitrary: calls(0, 18).chain((batch) =>
      fc
        .oneof({ weight: 5, arbitrary: fc.constant(batch.length) }, { weight: 1, arbitrary: fc.nat(20) })
        .map((valuesLength): Execution => ({ form: 'executeBatch', calls: batch, valuesLength })),
    ),
  },
  {
    weight: 4,
    arbitrary: calls(0, 18).map((batch): Execution => ({
      form: 'erc7579',
      calls: batch,
      mode: BATCH_DEFAULT,
    })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(calls(1, 3), fc.uint8Array({ minLength: 32, maxLength: 32 }))
      .map(([batch, mode]): Execution => ({ form: 'erc7579', calls: batch, mode: bytesToHex(mode) })),
  },
  {
    weight: 1,
    arbitrary: callArbitrary.map((call): Execution => ({ form: 'erc7579Single', calls: [call] })),
  },
  {
    weight: 1,
    arbitrary: calls(1, 3).map((batch): Execution => ({ form: 'simpleAccountV08Batch', calls: batch })),
  },
  {
    weight: 1,
    arbitrary: fc
      .uint8Array({ maxLength: 300 })
      .map((bytes): Execution => ({ form: 'random', bytes: bytesToHex(bytes) })),
  },
);

function encodeExecution(execution: Execution): Hex {
  switch (execution.form) {
    case 'execute': {
      const [call] = execution.calls as [Call];
      return encodeFunctionData({
        abi: accountAbi,
        functionName: 'execute',
        args: [call.target, call.value, call.data],
      });
    }
    case 'executeTuple':
      return encodeFunctionData({ abi: accountAbi, functionName: 'execute', args: [execution.calls[0]!] });
    case 'executeBatch': {
      const values = Array.from(
        { length: execution.valuesLength },
        (_unused, index) => execution.calls[index]?.value ?? 0n,
      );
      return encodeFunctionData({
        abi: accountAbi,
        functionName: 'executeBatch',
        args: [execution.calls.map((call) => call.target), values, execution.calls.map((call) => call.data)],
      });
    }
    case 'erc7579':
      return encodeFunctionData({
        abi: accountAbi,
        functionName: 'execute',
        args: [execution.mode, encodeAbiParameters(executionsAbi, [execution.calls])],
      });
    case 'erc7579Single': {
      const [call] = execution.calls as [Call];
      const packed =
        `0x${call.target.slice(2)}${call.value.toString(16).padStart(64, '0')}${call.data.slice(2)}` as Hex;
      return encodeFunctionData({ abi: accountAbi, functionName: 'execute', args: [SINGLE_DEFAULT, packed] });
    }
    case 'simpleAccountV08Batch':
      return encodeFunctionData({ abi: accountAbi, functionName: 'executeBatch', args: [execution.calls] });
    case 'random':
      return execution.bytes;
  }
}

/** The model's verdict for an unmutated generated execution (undefined: the model makes no claim). */
function modelAccepts(execution: Execution, sender: Address): boolean | undefined {
  if (execution.form === 'random') return undefined;
  if (sender === DENIED_SENDER) return false;
  const targetsOk = execution.calls.every(
    (call) => allowlisted.has(call.target.toLowerCase()) && !denied.has(call.target.toLowerCase()),
  );
  const noDelegationManager = execution.calls.every((call) => call.target !== DELEGATION_MANAGER);
  const batchOk = (callData: Hex) =>
    execution.calls.length >= 1 &&
    execution.calls.length <= 16 &&
    execution.calls.every((call) => call.value === 0n) &&
    (callData.length - 2) / 2 <= 32 * 1024;
  switch (execution.form) {
    case 'execute':
    case 'executeTuple':
      return targetsOk && noDelegationManager;
    case 'executeBatch':
      return (
        execution.valuesLength === execution.calls.length &&
        batchOk(encodeExecution(execution)) &&
        targetsOk &&
        noDelegationManager
      );
    case 'erc7579':
      return (
        execution.mode === BATCH_DEFAULT &&
        batchOk(encodeExecution(execution)) &&
        targetsOk &&
        noDelegationManager
      );
    case 'erc7579Single':
    case 'simpleAccountV08Batch':
      return false;
  }
}

/**
 * Independent reading of accepted callData: the calls it makes when it is a canonical supported
 * execution (viem's decoder, the re-encoding must give back the same bytes), else undefined.
 */
function canonicalCallsOf(callData: Hex): { batch: boolean; calls: Call[] } | undefined {
  try {
    const decoded = decodeFunctionData({ abi: accountAbi, data: callData });
    if (
      encodeFunctionData({
        abi: accountAbi,
        functionName: decoded.functionName,
        args: decoded.args,
      } as never).toLowerCase() !== callData.toLowerCase()
    ) {
      return undefined;
    }
    const args = decoded.args as readonly unknown[];
    if (decoded.functionName === 'execute' && args.length === 3) {
      const [target, value, data] = args as [Address, bigint, Hex];
      return { batch: false, calls: [{ target, value, data }] };
    }
    if (decoded.functionName === 'execute' && args.length === 1)
      return { batch: false, calls: [args[0] as Call] };
    if (decoded.functionName === 'executeBatch' && args.length === 3) {
      const [targets, values, datas] = args as [Address[], bigint[], Hex[]];
      if (values.length !== targets.length || datas.length !== targets.length) return undefined;
      return {
        batch: true,
        calls: targets.map((target, index) => ({ target, value: values[index]!, data: datas[index]! })),
      };
    }
    if (decoded.functionName === 'execute' && args.length === 2 && (args[0] as Hex) === BATCH_DEFAULT) {
      const inner = args[1] as Hex;
      const [executions] = decodeAbiParameters(executionsAbi, inner);
      if (encodeAbiParameters(executionsAbi, [executions]).toLowerCase() !== inner.toLowerCase())
        return undefined;
      return { batch: true, calls: [...executions] };
    }
    return undefined;
  } catch {
    return undefined;
  }
}

type Mutation =
  | { kind: 'flip'; at: number; byte: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'append'; bytes: Uint8Array }
  | { kind: 'insert'; at: number; byte: number };

const mutationArbitrary: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('append' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 40 }) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
);

function mutate(callData: Hex, mutations: Mutation[]): Hex {
  let bytes = [...hexToBytes(callData)];
  for (const mutation of mutations) {
    const at = bytes.length === 0 ? 0 : 'at' in mutation ? mutation.at % (bytes.length + 1) : 0;
    if (mutation.kind === 'flip' && bytes.length > 0) bytes[at % bytes.length] = mutation.byte;
    if (mutation.kind === 'truncate') bytes = bytes.slice(0, at);
    if (mutation.kind === 'append') bytes.push(...mutation.bytes);
    if (mutation.kind === 'insert') bytes.splice(at, 0, mutation.byte);
  }
  return bytesToHex(Uint8Array.from(bytes));
}

describe('decoder and policy properties (fast-check)', () => {
  let app: TestApp;
  let merchant: SignedInMerchant;
  let clientId: string;
  beforeAll(async () => {
    app = await startTestApp({ LOG_LEVEL: 'warn' });
    merchant = await signInNewMerchant(app);
    clientId = (await createPaymasterClient(app, merchant, { allowedChainIds: [CHAIN_ID] })).clientId;
    for (const target of [...ALLOWED, DENIED_TARGET, DELEGATION_MANAGER])
      await allowContract(app, merchant, CHAIN_ID, target);
    await addDenyRule(app, merchant, { chainId: CHAIN_ID, kind: 'target', address: DENIED_TARGET });
    await addDenyRule(app, merchant, { chainId: CHAIN_ID, kind: 'sender', address: DENIED_SENDER });
  });
  afterAll(() => app.close());

  const request = (method: string, sender: Address, callData: Hex) => ({
    jsonrpc: '2.0',
    id: 1,
    method,
    params: [
      {
        sender,
        nonce: '0x0',
        callData,
        callGasLimit: '0x30000',
        verificationGasLimit: '0x30000',
        preVerificationGas: '0x10000',
        maxFeePerGas: '0x3b9aca00',
        maxPriorityFeePerGas: '0x3b9aca00',
      },
      ENTRY_POINT_V07_ADDRESS,
      CHAIN_ID,
    ],
  });

  /** The invariant every answer must keep: data only for canonical, allowed, unblocked executions. */
  function expectPolicyHeld(
    response: { status: number; body: { result?: unknown; error?: { code: number; message: string } } },
    sender: Address,
    callData: Hex,
  ) {
    expect(response.status).toBe(200);
    if (response.body.error) {
      expect([-32602, -32600]).toContain(response.body.error.code);
      expect(response.body.error.message).toMatch(
        /^Policy denied: paymaster_(target_not_allowed|blocked_by_merchant_rule)/,
      );
      return;
    }
    expect(response.body.result).toBeDefined();
    const read = canonicalCallsOf(callData);
    expect(read).toBeDefined();
    expect(sender).not.toBe(DENIED_SENDER);
    for (const call of read!.calls) {
      expect(allowlisted.has(call.target.toLowerCase())).toBe(true);
      expect(denied.has(call.target.toLowerCase())).toBe(false);
      expect(call.target.toLowerCase()).not.toBe(DELEGATION_MANAGER.toLowerCase());
    }
    if (read!.batch) {
      expect(read!.calls.length).toBeGreaterThanOrEqual(1);
      expect(read!.calls.length).toBeLessThanOrEqual(16);
      expect(read!.calls.every((call) => call.value === 0n)).toBe(true);
    }
  }

  it('signed data (real signer) is returned exactly when the model allows the generated execution', async () => {
    let signed = 0;
    await fc.assert(
      fc.asyncProperty(
        executionArbitrary,
        fc.constantFrom(SENDER, SENDER, SENDER, DENIED_SENDER),
        async (execution, sender) => {
          const callData = encodeExecution(execution);
          const response = await paymasterRpc(
            app,
            clientId,
            request('pm_getPaymasterData', sender, callData),
          );
          expectPolicyHeld(response, sender, callData);
          const expected = modelAccepts(execution, sender);
          if (expected !== undefined) expect(response.body.result !== undefined).toBe(expected);
          if (response.body.result) signed++;
        },
      ),
      { numRuns: 150 },
    );
    // The generators must exercise both outcomes, or the property says little.
    expect(signed).toBeGreaterThan(5);
  });

  it('mutated callData never yields data for a non-canonical, unlisted or blocked execution', async () => {
    await fc.assert(
      fc.asyncProperty(
        executionArbitrary,
        fc.array(mutationArbitrary, { minLength: 1, maxLength: 3 }),
        async (execution, mutations) => {
          const callData = mutate(encodeExecution(execution), mutations);
          const response = await paymasterRpc(
            app,
            clientId,
            request('pm_getPaymasterStubData', SENDER, callData),
          );
          expectPolicyHeld(response, SENDER, callData);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('no request shape produces a 500: arbitrary JSON bodies and arbitrary params', async () => {
    const params = fc.oneof(
      fc.array(fc.jsonValue(), { maxLength: 5 }),
      fc.tuple(
        fc.dictionary(
          fc.constantFrom(
            'sender',
            'nonce',
            'callData',
            'callGasLimit',
            'maxFeePerGas',
            'factory',
            'eip7702Auth',
            'paymasterPostOpGasLimit',
          ),
          fc.jsonValue(),
        ),
        fc.oneof(fc.constant(ENTRY_POINT_V07_ADDRESS), fc.jsonValue()),
        fc.oneof(fc.constant(CHAIN_ID), fc.constant('0x14a34'), fc.jsonValue()),
        fc.oneof(fc.constant(undefined), fc.jsonValue(), fc.record({ token: fc.jsonValue() })),
      ),
    );
    const body = fc.oneof(
      fc.jsonValue(),
      fc.record({
        jsonrpc: fc.oneof(fc.constant('2.0'), fc.jsonValue()),
        id: fc.oneof(fc.integer(), fc.string(), fc.jsonValue()),
        method: fc.oneof(
          fc.constantFrom('pm_getPaymasterStubData', 'pm_getPaymasterData', 'pm_sponsorUserOperation'),
          fc.jsonValue(),
        ),
        params,
      }),
    );
    await fc.assert(
      fc.asyncProperty(body, async (json) => {
        const response = await paymasterRpc(app, clientId, JSON.stringify(json));
        expect([200, 403]).toContain(response.status);
        if (response.status === 200) expect(response.body).toMatchObject({ jsonrpc: '2.0' });
        else expect(response.body.message).toMatch(/^Policy denied: paymaster_chain_not_allowed/);
      }),
      { numRuns: 300 },
    );
    expect(app.logLines.some((line) => line.includes('paymaster rpc failed'))).toBe(false);
  });
});
