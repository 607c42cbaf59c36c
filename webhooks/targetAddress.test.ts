import {
  ipLiteralOf,
  isPublicAddress,
  NON_PUBLIC_ADDRESS_PLACEHOLDER,
  withoutNonPublicAddresses,
} from './targetAddress';

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '127.1.2.3',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '192.0.2.10',
    '::1',
    '::',
    'fe80::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '2002:7f00:1::',
    '2001:db8::1',
    // IPv4-compatible (deprecated) ::/96, whatever the IPv4 inside.
    '::8.8.8.8',
    '::7f00:1',
    '::a00:1',
    // NAT64 local-use 64:ff9b:1::/48 (RFC 8215): translated inside a private network.
    '64:ff9b:1::1',
    '64:ff9b:1::808:808',
    '64:ff9b:1:ffff::a',
    // IPv4-translated ::ffff:0:0:0/96 (RFC 6145).
    '::ffff:0:808:808',
    '::ffff:0:7f00:1',
    // Well-known NAT64 and 6to4 carrying a private IPv4.
    '64:ff9b::10.0.0.1',
    '64:ff9b::c0a8:101',
    '2002:a9fe:a9fe::1',
    '2002:c0a8:101::1',
    // Teredo, benchmarking, ORCHID, discard, site-local, documentation 3fff::/20, IETF protocol 2001::/23.
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '2001:2::1',
    '2001:20::1',
    '100::1',
    'fec0::1',
    '3fff::1',
    '2001:1::1',
    // The shared and reserved IPv4 blocks.
    '100.127.255.255',
    '198.18.0.1',
    '198.51.100.7',
    '203.0.113.9',
    '240.0.0.1',
    // Not standard notation: never parsed as an address.
    '2130706433',
    '0x7f.1',
  ])('%s is not public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '2a00:1450:4001::200e',
    '64:ff9b::8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
    '::ffff:1.1.1.1',
    '2001:4860:4860::8888',
  ])('%s is public', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it('a name is not an address', () => {
    expect(isPublicAddress('example.com')).toBe(false);
  });
});

describe('ipLiteralOf', () => {
  it('reads IPv4 and bracketed IPv6 hostnames and leaves names alone', () => {
    expect(ipLiteralOf('10.0.0.1')).toBe('10.0.0.1');
    expect(ipLiteralOf('[::1]')).toBe('::1');
    expect(ipLiteralOf('hooks.example.com')).toBeUndefined();
  });
});

describe('withoutNonPublicAddresses', () => {
  it.each([
    ['connect ECONNREFUSED 10.0.0.5:443', `connect ECONNREFUSED ${NON_PUBLIC_ADDRESS_PLACEHOLDER}:443`],
    ['connect ECONNREFUSED ::1:8080', `connect ECONNREFUSED ${NON_PUBLIC_ADDRESS_PLACEHOLDER}`],
    [
      'connect ETIMEDOUT fd00::12 (port 443)',
      `connect ETIMEDOUT ${NON_PUBLIC_ADDRESS_PLACEHOLDER} (port 443)`,
    ],
    ['connect ETIMEDOUT 93.184.216.34:443', 'connect ETIMEDOUT 93.184.216.34:443'],
    ['socket hang up at 10:30', 'socket hang up at 10:30'],
  ])('%j reads %j', (text, expected) => {
    expect(withoutNonPublicAddresses(text)).toBe(expected);
  });
});
