import { randomBytes } from 'node:crypto';
import { getAddress } from 'viem';
import {
  createDepositAddressFilter,
  FILTER_BITS_PER_ADDRESS,
  FILTER_HEADROOM,
  FILTER_MIN_CAPACITY,
} from './depositAddressFilter';

const randomAddress = () => `0x${randomBytes(20).toString('hex')}`;

describe('deposit address filter', () => {
  it('never answers "not ours" for an added address, in any case, at and past its capacity', () => {
    const filter = createDepositAddressFilter(100_000);
    const added = Array.from({ length: filter.capacity + 20_000 }, randomAddress);
    for (const address of added) filter.add(address);
    expect(filter.added).toBe(added.length);
    expect(added.every((address) => filter.mightContain(address))).toBe(true);
    // Checksummed or upper-case hex: the same address.
    expect(added.slice(0, 1_000).every((address) => filter.mightContain(getAddress(address)))).toBe(true);
    expect(filter.mightContain(`0x${added[0]!.slice(2).toUpperCase()}`)).toBe(true);
  });

  it('lets through about the stated share of addresses never added (at most 0.1 % at capacity)', () => {
    const filter = createDepositAddressFilter(200_000);
    for (let index = 0; index < filter.capacity; index += 1) filter.add(randomAddress());
    const strangers = 200_000;
    let passed = 0;
    for (let index = 0; index < strangers; index += 1) if (filter.mightContain(randomAddress())) passed += 1;
    // 16 bits and 11 probes per address: 0.046 % expected at capacity (about 92 of 200,000).
    expect(passed / strangers).toBeLessThan(0.001);
    expect(passed).toBeGreaterThan(0);
  });

  it('spreads addresses that differ only in one word (a counter), not only random ones', () => {
    const filter = createDepositAddressFilter(50_000);
    const counted = (n: number) => `0x${'00'.repeat(16)}${n.toString(16).padStart(8, '0')}`;
    for (let n = 0; n < 50_000; n += 1) filter.add(counted(n));
    let passed = 0;
    for (let n = 50_000; n < 150_000; n += 1) if (filter.mightContain(counted(n))) passed += 1;
    expect(passed / 100_000).toBeLessThan(0.01);
  });

  it('answers "not ours" for an empty filter and for strings that are not addresses (Postgres could match none)', () => {
    const filter = createDepositAddressFilter(10);
    expect(filter.mightContain(randomAddress())).toBe(false);
    filter.add('not an address');
    filter.add('0x1234');
    expect(filter.added).toBe(2);
    expect(filter.mightContain('not an address')).toBe(false);
    expect(filter.mightContain('0x1234')).toBe(false);
    expect(filter.mightContain(`0x${'zz'.repeat(20)}`)).toBe(false);
  });

  it('takes the stated memory: 16 bits per address of capacity, the capacity 1.25× the addresses built', () => {
    const filter = createDepositAddressFilter(1_000_000);
    expect(filter.capacity).toBe(1_250_000);
    expect(filter.bytes).toBe((1_250_000 * FILTER_BITS_PER_ADDRESS) / 8);
    expect(filter.bytes / 2 ** 20).toBeLessThan(2.4);
    expect(createDepositAddressFilter(1).capacity).toBe(Math.ceil(FILTER_MIN_CAPACITY * FILTER_HEADROOM));
  });
});
