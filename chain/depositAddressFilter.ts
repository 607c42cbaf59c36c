/**
 * A Bloom filter of deposit addresses: "maybe ours" or "certainly not ours" for a Transfer's recipient,
 * with no false negatives whatever the addresses. The monitor's unfiltered scan asks Postgres only about
 * the recipients that pass it; Postgres stays the authority (a false positive is confirmed there and
 * matches nothing), so the filter can only save lookups, never lose a deposit.
 *
 * No hashing: deposit addresses are CREATE2 outputs (the low 160 bits of a keccak), uniformly random
 * already. The address's five 32-bit words are folded into two (`h1`, `h2`, XOR of words, so an address
 * structured in part — a test's counter, a vanity prefix — still spreads) and the k probes are
 * `h1 + i·h2 mod m` (Kirsch–Mitzenmacher double hashing: two hashes give k with the same false-positive
 * rate). Sizing: docs/decisions.md, "Deposit address filter".
 */

/** Bits per address at the filter's capacity: with 11 probes, a false-positive rate of about 0.05 %. */
export const FILTER_BITS_PER_ADDRESS = 16;
export const FILTER_PROBES = 11;
/** Room for the addresses added after a build before the filter counts as full (and is rebuilt). */
export const FILTER_HEADROOM = 1.25;
/** The smallest capacity built: a small watched set still gets a filter that takes a day's growth. */
export const FILTER_MIN_CAPACITY = 65_536;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export interface DepositAddressFilter {
  /** Adds a deposit address (hex, any case). An address that is not 20 bytes of hex is never a recipient. */
  add(address: string): void;
  /** False only when the address was certainly never added. */
  mightContain(address: string): boolean;
  /** Addresses added (with repeats), and the count the bits were sized for. */
  readonly added: number;
  readonly capacity: number;
  /** The bit array's size in bytes. */
  readonly bytes: number;
}

/** The two 32-bit probe seeds of a lower- or mixed-case hex address; undefined when it is not one. */
function seedsOf(address: string): [number, number] | undefined {
  if (address.length !== 42 || !ADDRESS.test(address)) return undefined;
  const word = (index: number) => parseInt(address.slice(2 + index * 8, 10 + index * 8), 16);
  const h1 = (word(0) ^ word(2) ^ word(4)) >>> 0;
  // Odd, so the probes of one address never all land on one bit whatever m's factors.
  const h2 = ((word(1) ^ word(3)) | 1) >>> 0;
  return [h1, h2];
}

/** An empty filter sized for `expected` addresses (at least FILTER_MIN_CAPACITY), with headroom. */
export function createDepositAddressFilter(expected: number): DepositAddressFilter {
  const capacity = Math.ceil(Math.max(expected, FILTER_MIN_CAPACITY) * FILTER_HEADROOM);
  const bitCount = capacity * FILTER_BITS_PER_ADDRESS;
  const words = new Uint32Array(Math.ceil(bitCount / 32));
  let added = 0;
  // h1 + i·h2 stays below 2^36: exact in a double, no 32-bit wrap to reason about.
  const probe = (h1: number, h2: number, index: number) => (h1 + index * h2) % bitCount;
  return {
    add(address) {
      const seeds = seedsOf(address);
      added += 1;
      if (!seeds) return;
      for (let index = 0; index < FILTER_PROBES; index += 1) {
        const bit = probe(seeds[0], seeds[1], index);
        words[bit >>> 5]! |= 1 << (bit & 31);
      }
    },
    mightContain(address) {
      const seeds = seedsOf(address);
      // Not an address: no deposit address can equal it; Postgres would match nothing either.
      if (!seeds) return false;
      for (let index = 0; index < FILTER_PROBES; index += 1) {
        const bit = probe(seeds[0], seeds[1], index);
        if ((words[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
      }
      return true;
    },
    get added() {
      return added;
    },
    capacity,
    bytes: words.byteLength,
  };
}
