import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';

/**
 * Which network addresses a webhook may be sent to (docs/decisions.md "Webhooks": public unicast only). Parsed and
 * classified by ipaddr.js, whose special-purpose ranges follow the IANA registries: private,
 * loopback, link-local, shared (CGNAT), documentation, benchmarking, multicast, reserved, unique-local,
 * site-local, discard, NAT64 local-use (64:ff9b:1::/48), IPv4-translated (::ffff:0:0:0/96), Teredo
 * and ORCHID are not public. On top of its list: the deprecated IPv4-compatible block ::/96, the rest
 * of the IETF protocol block 2001::/23, and the documentation block 3fff::/20. IPv6 forms that carry
 * an IPv4 address (mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16) are as public as it.
 */
const NOT_PUBLIC_BEYOND_IPADDR = ['::/96', '2001::/23', '2001:db8::/32', '3fff::/20'].map((cidr) =>
  ipaddr.IPv6.parseCIDR(cidr),
);
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
const SIX_TO_FOUR = ipaddr.IPv6.parseCIDR('2002::/16');

const ipv4Of = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

/** The IPv4 address an IPv6 address stands for (mapped, well-known NAT64, 6to4), if any. */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  if (address.isIPv4MappedAddress()) return address.toIPv4Address();
  const parts = address.parts;
  if (address.match(NAT64_WELL_KNOWN)) return ipv4Of(parts[6]!, parts[7]!);
  if (address.match(SIX_TO_FOUR)) return ipv4Of(parts[1]!, parts[2]!);
  return undefined;
}

function isPublic(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (address.kind() === 'ipv4') return address.range() === 'unicast';
  const ipv6 = address as ipaddr.IPv6;
  const ipv4 = embeddedIpv4(ipv6);
  if (ipv4) return isPublic(ipv4);
  return ipv6.range() === 'unicast' && !NOT_PUBLIC_BEYOND_IPADDR.some((range) => ipv6.match(range));
}

/** True when `candidate` (an IPv4 or IPv6 literal, canonical or not) is a public unicast address. */
export function isPublicAddress(candidate: string): boolean {
  // A zone id (`fe80::1%eth0`) names an interface, not a different address.
  const address = candidate.split('%')[0]!;
  // Only the standard notations (node's isIP): ipaddr.js would also read "0x7f.1" or "2130706433".
  const family = isIP(address);
  if (family === 4) return isPublic(ipaddr.IPv4.parse(address));
  if (family !== 6) return false;
  // Hex words first (the URL parser's canonical form): ipaddr.js reads a dotted tail such as
  // "::8.8.8.8" (IPv4-compatible, ::/96) as IPv4-mapped "::ffff:8.8.8.8".
  return isPublic(ipaddr.IPv6.parse(new URL(`http://[${address}]/`).hostname.slice(1, -1)));
}

/** The IP literal a URL hostname names (brackets of IPv6 removed), or undefined for a DNS name. */
export function ipLiteralOf(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : undefined;
}

/** What a merchant reads instead of an internal address in a delivery error. */
export const NON_PUBLIC_ADDRESS_PLACEHOLDER = '[non-public address]';

/**
 * `text` (a delivery error a merchant reads) with every non-public IP address replaced: their hostname's
 * private resolutions, or the internal address a connection failed on, tell them about our network.
 */
export function withoutNonPublicAddresses(text: string): string {
  return text.replace(/(?:\d{1,3}\.){3}\d{1,3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]*[0-9a-fA-F.]/g, (token) =>
    isIP(token) && !isPublicAddress(token) ? NON_PUBLIC_ADDRESS_PLACEHOLDER : token,
  );
}
