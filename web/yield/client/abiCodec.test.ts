import {
  decodeFunctionResult,
  encodeFunctionData,
  encodeFunctionResult,
  maxUint256,
  toFunctionSelector,
  type AbiFunction,
  type AbiParameter,
} from 'viem';
import { AbiCodecError, decodeResult, encodeCall } from './abiCodec';
import { ERC20_ABI, VAULT_ABI } from './vaultAbi';

/** The page's small coder must give viem's bytes and values for every function the site calls. */

const SITE_FUNCTIONS = [...ERC20_ABI, ...VAULT_ABI] as readonly AbiFunction[];

/** Values of each type the ABI uses, edge cases included: each variant of a function uses one of them. */
const SAMPLES: Record<string, readonly unknown[]> = {
  address: [
    '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    '0x0000000000000000000000000000000000000000',
    '0xffffffffffffffffffffffffffffffffffffffff',
  ],
  uint256: [0n, 1n, maxUint256, 12_500_000_000_000_000_000n],
  bool: [true, false],
  bytes4: ['0x620ee8e4', '0x01ffc9a7'],
  'uint256[]': [[], [7n], [1n, maxUint256, 0n]],
};
const VARIANTS = 4;

const sample = (parameter: AbiParameter, variant: number, position: number) => {
  const values = SAMPLES[parameter.type];
  if (!values) throw new Error(`no samples for ${parameter.type}: add some`);
  return values[(variant + position) % values.length];
};
const samplesFor = (parameters: readonly AbiParameter[], variant: number) =>
  parameters.map((parameter, position) => sample(parameter, variant, position));

/** viem's checksummed addresses in lower case, as the page decodes them. */
const lowerCaseAddresses = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(lowerCaseAddresses)
    : typeof value === 'string'
      ? value.toLowerCase()
      : value;

const variants = SITE_FUNCTIONS.flatMap((entry) =>
  Array.from({ length: VARIANTS }, (_, variant) => [entry.name, variant, entry] as const),
);

describe("the yield site's ABI coder gives viem's results", () => {
  it.each(variants)('%s (variant %i): the same call data', (_name, variant, entry) => {
    const args = samplesFor(entry.inputs, variant);
    expect(encodeCall(toFunctionSelector(entry), entry.inputs, args)).toBe(
      encodeFunctionData({ abi: [entry], functionName: entry.name, args }),
    );
  });

  it.each(variants)('%s (variant %i): the same return values', (_name, variant, entry) => {
    const outputs = samplesFor(entry.outputs, variant);
    const result = outputs.length === 1 ? outputs[0] : outputs;
    const data = encodeFunctionResult({ abi: [entry], functionName: entry.name, result } as never);
    const expected = decodeFunctionResult({ abi: [entry], functionName: entry.name, data });
    expect(decodeResult(entry.outputs, data)).toEqual(lowerCaseAddresses(expected));
  });
});

describe("the yield site's ABI coder refuses what it cannot take", () => {
  const uint256 = [{ name: 'value', type: 'uint256' }] as const;
  const selector = '0x12345678';

  it.each([
    ['a negative uint256', uint256, [-1n]],
    ['a uint256 of 2^256', uint256, [maxUint256 + 1n]],
    ['a number for a uint256', uint256, [1]],
    ['a short address', [{ name: 'to', type: 'address' }], ['0x1234']],
    ['a bytes4 of 5 bytes', [{ name: 'id', type: 'bytes4' }], ['0x0102030405']],
    ['a type it does not know', [{ name: 'text', type: 'string' }], ['hello']],
    ['too few arguments', uint256, []],
  ] as const)('encoding %s', (_case, inputs, args) => {
    expect(() => encodeCall(selector, inputs, args)).toThrow(AbiCodecError);
  });

  const word = (value: bigint) => value.toString(16).padStart(64, '0');
  it.each([
    ['no data (a call to an address without code)', uint256, '0x'],
    ['half a word', uint256, `0x${word(1n).slice(32)}`],
    ['a bool that is neither 0 nor 1', [{ name: '', type: 'bool' }], `0x${word(2n)}`],
    [
      'an array longer than the data',
      [{ name: '', type: 'uint256[]' }],
      `0x${word(32n)}${word(3n)}${word(1n)}${word(2n)}`,
    ],
    ['an array length of 2^255', [{ name: '', type: 'uint256[]' }], `0x${word(32n)}${word(1n << 255n)}`],
    [
      'an array offset inside a word',
      [{ name: '', type: 'uint256[]' }],
      `0x${word(33n)}${word(0n)}${word(0n)}`,
    ],
    ['a type it does not know', [{ name: '', type: 'int256' }], `0x${word(1n)}`],
  ] as const)('decoding %s', (_case, outputs, data) => {
    expect(() => decodeResult(outputs, data)).toThrow(AbiCodecError);
  });
});
