import { customHostnameReader, hostnameOfHost } from './customDomainHosts';

describe('reading a request host for custom domains (security review III, finding 5)', () => {
  it('drops the port, the IPv6 brackets and the trailing dot, and lower-cases', () => {
    expect(hostnameOfHost('SHOP.Example.com.')).toBe('shop.example.com');
    expect(hostnameOfHost('shop.example.com.:443')).toBe('shop.example.com');
    expect(hostnameOfHost('shop.example.com:8443')).toBe('shop.example.com');
    expect(hostnameOfHost('shop.example.com..')).toBe('shop.example.com');
    expect(hostnameOfHost('[::1]:3000')).toBe('::1');
    expect(hostnameOfHost('[::FFFF:192.0.2.1]')).toBe('::ffff:192.0.2.1');
  });

  it('names a custom hostname only for a host that could be one', () => {
    const customHostnameOf = customHostnameReader('https://api.stablepay.example');
    expect(customHostnameOf('Shop.Example.com.:443')).toBe('shop.example.com');
    for (const host of [
      undefined,
      '',
      'api.stablepay.example',
      'API.stablepay.example.:443',
      'localhost:3000',
      '192.0.2.1:80',
      '[::ffff:192.0.2.1]:80',
      '[2001:db8::1]',
      'under_score.example',
    ])
      expect([host, customHostnameOf(host)]).toEqual([host, undefined]);
  });
});
