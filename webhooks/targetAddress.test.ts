import { ipLiteralOf, isPublicAddress } from './targetAddress';

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
