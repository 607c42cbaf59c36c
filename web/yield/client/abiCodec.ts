import type { AbiParameter, Hex } from 'viem';

/**
 * ABI encoding and decoding for the few types the site's functions take and return (vaultAbi.ts): static
 * words (address, uint256, bool, bytesN) and one-dimensional arrays of them as outputs. viem's coder
 * would make the page's script nearly four times larger (docs/decisions.md); this one is driven by the
 * same ABI entries, and web/yield/client/abiCodec.test.ts proves it gives viem's bytes and values for
 * every function the site calls. A type outside these is refused, never guessed.
 */

/** Hex digits in one 32-byte ABI word. */
const WORD = 64;
const UINT256_LIMIT = 1n << 256n;

/** A value or a return the coder cannot take: the message says which. */
export class AbiCodecError extends Error {
  override name = 'AbiCodecError';
}

const fixedBytes = (type: string) => Number(/^bytes([1-9]|[12]\d|3[0-2])$/.exec(type)?.[1] ?? 0);

function encodeWord(type: string, value: unknown): string {
  if (type === 'uint256' && typeof value === 'bigint' && value >= 0n && value < UINT256_LIMIT) {
    return value.toString(16).padStart(WORD, '0');
  }
  if (type === 'address' && typeof value === 'string' && /^0x[\da-f]{40}$/i.test(value)) {
    return value.slice(2).toLowerCase().padStart(WORD, '0');
  }
  if (type === 'bool' && typeof value === 'boolean') return (value ? '1' : '0').padStart(WORD, '0');
  const size = fixedBytes(type);
  if (size && typeof value === 'string' && new RegExp(`^0x[\\da-f]{${size * 2}}$`, 'i').test(value)) {
    return value.slice(2).toLowerCase().padEnd(WORD, '0');
  }
  throw new AbiCodecError(`Cannot encode ${String(value)} as ${type}`);
}

/** The call data: the function's selector, then each argument as a word, in the order of its inputs. */
export function encodeCall(selector: Hex, inputs: readonly AbiParameter[], args: readonly unknown[]): Hex {
  if (args.length !== inputs.length) {
    throw new AbiCodecError(`Expected ${inputs.length} arguments, got ${args.length}`);
  }
  return `${selector}${inputs.map((input, index) => encodeWord(input.type, args[index])).join('')}`;
}

function decodeWord(type: string, word: string): unknown {
  if (type === 'uint256') return BigInt(`0x${word}`);
  if (type === 'address') return `0x${word.slice(24)}`;
  if (type === 'bool' && /^0{63}[01]$/.test(word)) return word.endsWith('1');
  const size = fixedBytes(type);
  if (size) return `0x${word.slice(0, size * 2)}`;
  throw new AbiCodecError(`Cannot decode ${type} from 0x${word}`);
}

/**
 * The function's return, as viem's decodeFunctionResult gives it: the value of a single output, an array
 * of several. Addresses come back in lower case (the site never shows one it read, and checksumming
 * would need keccak in the page). Data too short for the outputs (a call to an address without code
 * answers 0x) is an error.
 */
export function decodeResult(outputs: readonly AbiParameter[], data: Hex): unknown {
  const hex = data.slice(2);
  const word = (index: number) => {
    if (!Number.isSafeInteger(index) || hex.length < (index + 1) * WORD) {
      throw new AbiCodecError(`The call returned ${data}, too short for ${outputs.length} outputs`);
    }
    return hex.slice(index * WORD, (index + 1) * WORD);
  };
  const uintAt = (index: number) => Number(BigInt(`0x${word(index)}`));
  const values = outputs.map((output, index) => {
    const element = /^(\w+)\[\]$/.exec(output.type)?.[1];
    if (!element) return decodeWord(output.type, word(index));
    // A dynamic array: the head holds the byte offset of its length, the elements follow the length.
    // (An offset that is not whole words, or a length the data does not hold, is refused by word().)
    const start = uintAt(index) / (WORD / 2);
    const length = uintAt(start);
    word(start + length);
    return Array.from({ length }, (_, offset) => decodeWord(element, word(start + 1 + offset)));
  });
  return values.length > 1 ? values : values[0];
}
