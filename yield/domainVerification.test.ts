import { newVerificationValue, normalizeHostname, verificationRecordName } from './domainVerification';

describe('normalizeHostname', () => {
  it('stores a DNS name lower-case without its trailing dot', () => {
    expect(normalizeHostname('Invest.Acme.Example.')).toEqual({ hostname: 'invest.acme.example' });
    expect(normalizeHostname(' xn--bcher-kva.example ')).toEqual({ hostname: 'xn--bcher-kva.example' });
  });

  it.each([
    ['https://shop.example', /scheme/],
    ['shop.example:443', /port/],
    ['shop.example/path', /path/],
    ['10.0.0.1', /IP address/],
    ['::1', /scheme, port or path/],
    ['localhost', /two labels/],
    ['-shop.example', /hyphen/],
    ['shop_.example', /letters, digits or hyphens/],
    [`${'a'.repeat(64)}.example`, /1-63/],
    [`${'a.'.repeat(127)}example`, /253/],
  ])('refuses %s', (input, problem) => {
    const normalized = normalizeHostname(input);
    expect('problem' in normalized && normalized.problem).toMatch(problem);
  });
});

describe('the TXT record', () => {
  it('is named under _stablepay-verification and carries a fresh 128-bit value', () => {
    expect(verificationRecordName('invest.acme.example')).toBe('_stablepay-verification.invest.acme.example');
    const [first, second] = [newVerificationValue(), newVerificationValue()];
    expect(first).toMatch(/^stablepay-verification=[0-9a-f]{32}$/);
    expect(second).not.toBe(first);
  });
});
