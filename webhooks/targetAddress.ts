import { BlockList, isIP } from 'node:net';

/**
 * Which network addresses a webhook may be sent to (DESIGN §5). Private, loopback, link-local,
 * shared (CGNAT), documentation, multicast and reserved ranges are not public; neither are IPv6
 * forms that embed such an IPv4 address (mapped, NAT64, 6to4).
 */
const nonPublic = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  nonPublic.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 address carries (mapped, NAT64 64:ff9b::/96, 6to4 2002::/16), if any. */
function embeddedIpv4(address: string): string | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  const words = expandIpv6(address);
  if (!words) return undefined;
  const toIpv4 = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  if (words.slice(0, 5).every((word) => word === 0) && words[5] === 0xffff)
    return toIpv4(words[6]!, words[7]!);
  if (words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((word) => word === 0))
    return toIpv4(words[6]!, words[7]!);
  if (words[0] === 0x2002) return toIpv4(words[1]!, words[2]!);
  return undefined;
}

function expandIpv6(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -dotted[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const headWords = head ? head.split(':') : [];
  const tailWords = tail ? tail.split(':') : [];
  const missing = 8 - headWords.length - tailWords.length;
  if (tail === undefined ? missing !== 0 : missing < 0) return undefined;
  return [...headWords, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...tailWords].map(
    (word) => parseInt(word, 16),
  );
}

/** True when `address` (an IPv4 or IPv6 literal) is a public unicast address. */
export function isPublicAddress(candidate: string): boolean {
  // A zone id (`fe80::1%eth0`) names an interface, not a different address.
  const address = candidate.split('%')[0]!;
  const family = isIP(address);
  if (family === 4) return !nonPublic.check(address, 'ipv4');
  if (family !== 6) return false;
  const ipv4 = embeddedIpv4(address);
  if (ipv4 !== undefined) return isPublicAddress(ipv4);
  return !nonPublic.check(address, 'ipv6');
}

/** The IP literal a URL hostname names (brackets of IPv6 removed), or undefined for a DNS name. */
export function ipLiteralOf(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : undefined;
}
