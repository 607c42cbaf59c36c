import { Resolver } from 'node:dns/promises';
import { answer, startDnsServer, type DnsServer } from './dnsServer';

/** The local DNS server answers node's own resolver (c-ares) over UDP, as the worker asks it. */
describe('the local DNS server', () => {
  const records = new Map<string, string[]>();
  let server: DnsServer;
  let resolver: Resolver;

  beforeAll(async () => {
    server = await startDnsServer({ records: (name) => records.get(name) });
    resolver = new Resolver({ timeout: 2_000, tries: 1 });
    resolver.setServers([server.address]);
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('answers TXT records, long values split into 255-byte strings, whatever the case of the question', async () => {
    const long = 'v='.padEnd(600, 'x');
    records.set('_stablepay-verification.shop.example', ['stablepay-verification=abc', long]);
    const answered = await resolver.resolveTxt('_stablepay-verification.SHOP.example');
    expect(answered.map((chunks) => chunks.join(''))).toEqual(['stablepay-verification=abc', long]);
    expect(answered[1]!.map((chunk) => chunk.length)).toEqual([255, 255, 90]);
  });

  it('answers NXDOMAIN for a name it has nothing for', async () => {
    await expect(resolver.resolveTxt('nothing.example')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('answers an empty set for another type of a known name', async () => {
    records.set('known.example', ['x']);
    await expect(resolver.resolve4('known.example')).rejects.toMatchObject({ code: 'ENODATA' });
  });

  it('answers a malformed packet with FORMERR and ignores one too short to carry an id', () => {
    expect(answer(Buffer.alloc(5), () => undefined)).toBeUndefined();
    const malformed = Buffer.alloc(12);
    malformed.writeUInt16BE(0xbeef, 0);
    const reply = answer(malformed, () => undefined)!;
    expect(reply.readUInt16BE(0)).toBe(0xbeef);
    expect(reply.readUInt16BE(2) & 0x000f).toBe(1);
  });
});
