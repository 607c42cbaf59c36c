import { randomBytes } from 'node:crypto';
import {
  concat,
  decodeAbiParameters,
  encodeAbiParameters,
  getAddress,
  encodeFunctionData,
  numberToHex,
  pad,
  parseAbi,
  parseAbiParameters,
  type Address,
  type Hex,
} from 'viem';
import {
  ERC7579_BATCH_DEFAULT_MODE,
  ERC7579_SINGLE_DEFAULT_MODE,
  MAX_BATCH_CALLDATA_BYTES,
  decodeExecuteCall,
} from './decodeExecuteCall';

const accountAbi = parseAbi([
  'function execute(address target, uint256 value, bytes data)',
  'function execute((address target, uint256 value, bytes data) call)',
  'function executeBatch(address[] targets, uint256[] values, bytes[] datas)',
  'function executeBatch(address[] targets, bytes[] datas)',
  'function executeBatch((address target, uint256 value, bytes data)[] calls)',
  'function execute(bytes32 mode, bytes executionCalldata)',
]);
const executions = parseAbiParameters('(address target, uint256 value, bytes data)[]');

const A: Address = '0x1111111111111111111111111111111111111111';
const B: Address = '0x2222222222222222222222222222222222222222';
const transfer: Hex =
  '0xa9059cbb000000000000000000000000333333333333333333333333333333333333333300000000000000000000000000000000000000000000000000000000000003e8';

const execute = (target: Address, value: bigint, data: Hex) =>
  encodeFunctionData({ abi: accountAbi, functionName: 'execute', args: [target, value, data] });
const executeTuple = (target: Address, value: bigint, data: Hex) =>
  encodeFunctionData({ abi: accountAbi, functionName: 'execute', args: [{ target, value, data }] });
const executeBatch = (targets: Address[], values: bigint[], datas: Hex[]) =>
  encodeFunctionData({ abi: accountAbi, functionName: 'executeBatch', args: [targets, values, datas] });
const erc7579 = (mode: Hex, executionCalldata: Hex) =>
  encodeFunctionData({ abi: accountAbi, functionName: 'execute', args: [mode, executionCalldata] });
const erc7579Batch = (calls: { target: Address; value: bigint; data: Hex }[]) =>
  erc7579(ERC7579_BATCH_DEFAULT_MODE, encodeAbiParameters(executions, [calls]));

const denialOf = (callData: Hex) => {
  const outcome = decodeExecuteCall(callData);
  if (outcome.ok) throw new Error(`expected a denial, decoded ${outcome.execution.form}`);
  return outcome.denial;
};

describe('decodeExecuteCall', () => {
  describe('understood forms', () => {
    it('reads execute(address,uint256,bytes) as one call', () => {
      expect(decodeExecuteCall(execute(A, 5n, transfer))).toEqual({
        ok: true,
        execution: { form: 'execute', calls: [{ target: A, value: 5n, data: transfer }] },
      });
    });

    it('reads the single-tuple execute((address,uint256,bytes))', () => {
      expect(decodeExecuteCall(executeTuple(B, 0n, '0x'))).toEqual({
        ok: true,
        execution: { form: 'executeTuple', calls: [{ target: B, value: 0n, data: '0x' }] },
      });
    });

    it('reads executeBatch(address[],uint256[],bytes[]) in order', () => {
      const outcome = decodeExecuteCall(executeBatch([A, B, A], [0n, 0n, 0n], [transfer, '0x', '0x01']));
      expect(outcome).toEqual({
        ok: true,
        execution: {
          form: 'executeBatch',
          calls: [
            { target: A, value: 0n, data: transfer },
            { target: B, value: 0n, data: '0x' },
            { target: A, value: 0n, data: '0x01' },
          ],
        },
      });
    });

    it('reads ERC-7579 execute(bytes32,bytes) in BatchDefault mode', () => {
      const outcome = decodeExecuteCall(
        erc7579Batch([
          { target: B, value: 0n, data: transfer },
          { target: A, value: 0n, data: '0x' },
        ]),
      );
      expect(outcome.ok && outcome.execution.form).toBe('erc7579Batch');
      expect(outcome.ok && outcome.execution.calls.map((call) => call.target)).toEqual([B, A]);
    });

    it('reads ERC-7579 SingleDefault mode (packed target | value | data) for the policy to judge', () => {
      const packed = concat([A, pad(numberToHex(0n), { size: 32 }), transfer]);
      expect(decodeExecuteCall(erc7579(ERC7579_SINGLE_DEFAULT_MODE, packed))).toEqual({
        ok: true,
        execution: { form: 'erc7579Single', calls: [{ target: A, value: 0n, data: transfer }] },
      });
    });

    it('accepts upper-case hex', () => {
      const callData = execute(A, 0n, transfer);
      expect(decodeExecuteCall(`0x${callData.slice(2).toUpperCase()}` as Hex).ok).toBe(true);
    });
  });

  describe('refusals (SPEC rule 4)', () => {
    it.each([
      ['empty callData', '0x' as Hex],
      ['a truncated selector', '0xb61d27' as Hex],
      ['an unknown selector', '0xdeadbeef' as Hex],
      ['a known selector with arguments cut short', execute(A, 0n, transfer).slice(0, 100) as Hex],
    ])('%s is undecodable', (_case, callData) => {
      expect(denialOf(callData).reason).toBe('undecodable_calldata');
    });

    it('refuses the two-array executeBatch(address[],bytes[]) as undecodable (not a supported form)', () => {
      const callData = encodeFunctionData({
        abi: accountAbi,
        functionName: 'executeBatch',
        args: [[A], [transfer]],
      });
      expect(denialOf(callData).reason).toBe('undecodable_calldata');
    });

    it("refuses SimpleAccount v0.8's tuple-array executeBatch by name", () => {
      const callData = encodeFunctionData({
        abi: accountAbi,
        functionName: 'executeBatch',
        args: [[{ target: A, value: 0n, data: '0x' }]],
      });
      expect(denialOf(callData)).toEqual({
        reason: 'unsupported_execution',
        detail: expect.stringContaining('executeBatch((address,uint256,bytes)[])'),
      });
    });

    it('refuses an empty value array, even with one target and one calldata', () => {
      expect(denialOf(executeBatch([A], [], [transfer]))).toEqual({
        reason: 'batch_length_mismatch',
        detail: expect.stringContaining('empty value array'),
      });
    });

    it.each([
      ['more values than targets', [A], [0n, 0n], [transfer]],
      ['fewer calldatas than targets', [A, B], [0n, 0n], [transfer]],
    ] as const)('refuses arrays of unequal length: %s', (_case, targets, values, datas) => {
      expect(denialOf(executeBatch([...targets], [...values], [...datas])).reason).toBe(
        'batch_length_mismatch',
      );
    });

    it('refuses batches of 0 and of 17 calls, accepts 1 and 16', () => {
      const calls = (count: number) =>
        Array.from({ length: count }, () => ({ target: A, value: 0n, data: '0x' as Hex }));
      expect(denialOf(executeBatch([], [], [])).reason).toBe('batch_size');
      expect(denialOf(erc7579Batch(calls(0))).reason).toBe('batch_size');
      expect(denialOf(erc7579Batch(calls(17)))).toEqual({
        reason: 'batch_size',
        detail: expect.stringContaining('this one has 17'),
      });
      expect(denialOf(executeBatch(Array(17).fill(A), Array(17).fill(0n), Array(17).fill('0x'))).reason).toBe(
        'batch_size',
      );
      expect(decodeExecuteCall(erc7579Batch(calls(1))).ok).toBe(true);
      expect(decodeExecuteCall(erc7579Batch(calls(16))).ok).toBe(true);
    });

    it('refuses a batch over 32 KiB of callData and accepts one at the limit', () => {
      const overhead = (executeBatch([A], [0n], ['0x']).length - 2) / 2;
      // Payload rounded to 32-byte words: the largest that keeps the whole callData within the limit.
      const payloadBytes = Math.floor((MAX_BATCH_CALLDATA_BYTES - overhead) / 32) * 32;
      const atLimit = executeBatch([A], [0n], [`0x${'ab'.repeat(payloadBytes)}`]);
      expect((atLimit.length - 2) / 2).toBeLessThanOrEqual(MAX_BATCH_CALLDATA_BYTES);
      expect(decodeExecuteCall(atLimit).ok).toBe(true);
      const over = executeBatch([A], [0n], [`0x${'ab'.repeat(payloadBytes + 32)}`]);
      expect(denialOf(over).reason).toBe('batch_too_large');
      const over7579 = erc7579Batch([
        { target: A, value: 0n, data: `0x${'ab'.repeat(MAX_BATCH_CALLDATA_BYTES)}` },
      ]);
      expect(denialOf(over7579).reason).toBe('batch_too_large');
    });

    it.each([
      ['try mode (exec type 0x01)', `0x0101${'00'.repeat(30)}`],
      ['delegatecall (call type 0xff)', `0xff00${'00'.repeat(30)}`],
      ['staticcall (call type 0xfe)', `0xfe00${'00'.repeat(30)}`],
      ['single try mode', `0x0001${'00'.repeat(30)}`],
      ['batch with a mode selector', `0x01000000000011223344${'00'.repeat(22)}`],
      ['batch with a payload byte', `0x01${'00'.repeat(30)}01`],
    ])('refuses ERC-7579 %s', (_case, mode) => {
      const callData = erc7579(
        mode as Hex,
        encodeAbiParameters(executions, [[{ target: A, value: 0n, data: '0x' }]]),
      );
      expect(denialOf(callData)).toEqual({
        reason: 'unsupported_execution_mode',
        detail: expect.stringContaining(mode),
      });
    });

    it('refuses a SingleDefault execution shorter than target and value', () => {
      expect(denialOf(erc7579(ERC7579_SINGLE_DEFAULT_MODE, concat([A, '0x00']))).reason).toBe(
        'undecodable_calldata',
      );
    });

    describe('non-canonical encodings', () => {
      it('refuses trailing bytes after the arguments', () => {
        expect(denialOf(concat([execute(A, 0n, transfer), '0x00'])).reason).toBe('non_canonical_encoding');
        expect(denialOf(concat([execute(A, 0n, transfer), pad('0x', { size: 32 })])).reason).toBe(
          'non_canonical_encoding',
        );
      });

      it('refuses dirty high bits in an address word', () => {
        const callData = execute(A, 0n, transfer);
        const dirty = `${callData.slice(0, 10)}ff${callData.slice(12)}` as Hex;
        expect(denialOf(dirty).reason).toBe('non_canonical_encoding');
      });

      it('refuses a bytes offset that points elsewhere than the canonical position', () => {
        // execute(address,uint256,bytes): the bytes offset word is 0x60; move it to 0x80 with an extra padding word.
        const callData = execute(A, 0n, transfer);
        const head = callData.slice(10, 10 + 64 * 2);
        const tail = callData.slice(10 + 64 * 3);
        const moved =
          `${callData.slice(0, 10)}${head}${pad(numberToHex(0x80), { size: 32 }).slice(2)}${'00'.repeat(32)}${tail}` as Hex;
        expect(denialOf(moved).reason).toBe('non_canonical_encoding');
      });

      it('refuses non-zero padding after the bytes contents', () => {
        const callData = execute(A, 0n, '0x01');
        const dirtyPadding = `${callData.slice(0, -2)}ff` as Hex;
        expect(denialOf(dirtyPadding).reason).toBe('non_canonical_encoding');
      });

      it('refuses a non-canonical inner ERC-7579 execution array', () => {
        const inner = concat([
          encodeAbiParameters(executions, [[{ target: A, value: 0n, data: '0x' }]]),
          '0x00',
        ]);
        expect(denialOf(erc7579(ERC7579_BATCH_DEFAULT_MODE, inner)).reason).toBe('non_canonical_encoding');
      });
    });
  });

  describe('execute(address,uint256,bytes) read from its words', () => {
    const singleCall = parseAbiParameters('address target, uint256 value, bytes data');
    /** What decoding and re-encoding through viem says of the same bytes: the calls, or which denial. */
    const throughViem = (callData: Hex) => {
      const args = `0x${callData.slice(10)}` as Hex;
      try {
        const [target, value, data] = decodeAbiParameters(singleCall, args);
        if (encodeAbiParameters(singleCall, [target, value, data]).toLowerCase() !== args.toLowerCase())
          return 'non_canonical_encoding';
        return { target: getAddress(target), value, data };
      } catch {
        return 'undecodable_calldata';
      }
    };
    const outcomeOf = (callData: Hex) => {
      const outcome = decodeExecuteCall(callData);
      return outcome.ok ? outcome.execution.calls[0] : outcome.denial.reason;
    };
    const randomHex = (bytes: number): Hex => `0x${randomBytes(bytes).toString('hex')}`;

    it("agrees with viem's decode and re-encode on canonical calls and on every kind of corruption", () => {
      for (let i = 0; i < 400; i++) {
        const canonical = execute(
          getAddress(randomHex(20)),
          BigInt(randomHex(1 + (i % 32))),
          randomHex((i * 7) % 130),
        );
        const words = canonical.slice(10);
        const position = 10 + Math.floor(Math.random() * words.length);
        const variants: Hex[] = [
          canonical,
          canonical.toUpperCase().replace('0X', '0x') as Hex,
          // One hex digit changed anywhere: address high bytes, offset, length, contents, padding.
          `${canonical.slice(0, position)}${canonical[position] === 'f' ? '0' : 'f'}${canonical.slice(position + 1)}` as Hex,
          concat([canonical, pad('0x00')]),
          canonical.slice(0, canonical.length - 64) as Hex,
          canonical.slice(0, canonical.length - 2) as Hex,
        ];
        for (const callData of variants) expect(outcomeOf(callData)).toEqual(throughViem(callData));
      }
    });
  });
});
