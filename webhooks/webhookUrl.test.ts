import { webhookUrlProblem } from './webhookUrl';

const live = { allowPrivateTargets: false };
const development = { allowPrivateTargets: true };

describe('webhookUrlProblem (registration-time URL rules)', () => {
  it.each([
    'https://hooks.example.com/stablepay',
    'https://hooks.example.com:8443/a?b=c',
    'https://8.8.8.8/hook',
    'https://not-resolving-yet.example/hook',
  ])('accepts %s in live configuration', (url) => {
    expect(webhookUrlProblem(url, live)).toBeUndefined();
  });

  it.each([
    ['http://hooks.example.com/', 'must be an absolute https URL'],
    ['/relative/path', 'must be an absolute https URL'],
    ['ftp://hooks.example.com/', 'must be an absolute https URL'],
    ['not a url', 'must be an absolute https URL'],
    ['https://user:pass@hooks.example.com/', 'must not carry credentials'],
    ['https://127.0.0.1/hook', 'must not point to a private, loopback or link-local address'],
    ['https://10.0.0.1/hook', 'must not point to a private, loopback or link-local address'],
    [
      'https://169.254.169.254/latest/meta-data',
      'must not point to a private, loopback or link-local address',
    ],
    ['https://[::1]/hook', 'must not point to a private, loopback or link-local address'],
    ['https://[::ffff:127.0.0.1]/hook', 'must not point to a private, loopback or link-local address'],
    // WHATWG URL parsing normalises these spellings of 127.0.0.1 before the check sees them.
    ['https://2130706433/hook', 'must not point to a private, loopback or link-local address'],
    ['https://0x7f.1/hook', 'must not point to a private, loopback or link-local address'],
    [`https://hooks.example.com/${'a'.repeat(2048)}`, 'must be at most 2048 characters'],
  ])('refuses %s in live configuration', (url, problem) => {
    expect(webhookUrlProblem(url, live)).toBe(problem);
  });

  it('allows private addresses and plain http only where the deployment allows private targets', () => {
    expect(webhookUrlProblem('http://127.0.0.1:4000/hook', development)).toBeUndefined();
    expect(webhookUrlProblem('https://10.0.0.1/hook', development)).toBeUndefined();
    expect(webhookUrlProblem('ftp://127.0.0.1/hook', development)).toBe('must be an absolute https URL');
  });
});
