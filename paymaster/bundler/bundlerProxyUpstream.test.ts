import { credentialRedactor, transportErrorText } from './bundlerProxyUpstream';

describe('credentialRedactor', () => {
  it.each([
    [
      'a key in the path (Alchemy style)',
      'https://base-sepolia.g.alchemy.com/v2/AbCdEf0123456789xyz',
      ['AbCdEf0123456789xyz'],
    ],
    [
      'a key in the query (Pimlico style)',
      'https://api.pimlico.io/v2/84532/rpc?apikey=pim_9f8e7d6c5b4a3f2e',
      ['pim_9f8e7d6c5b4a3f2e'],
    ],
    ['user info', 'https://bundler:hunter2-secret@rpc.example.com/', ['hunter2-secret']],
    [
      'a key as a host label',
      'https://k7f9a8d6c5b4e3f2a1b0c.bundler.example.com/rpc',
      ['k7f9a8d6c5b4e3f2a1b0c'],
    ],
    [
      'a percent-encoded key',
      'https://rpc.example.com/rpc?key=a%2Fb%3Dc%2Bd0123',
      ['a/b=c+d0123', 'a%2Fb%3Dc%2Bd0123'],
    ],
  ])('removes %s from any text that quotes the URL or its parts', (_, url, secrets) => {
    const redact = credentialRedactor(url);
    const text = `Request to ${url} failed; path ${new URL(url).pathname}${new URL(url).search}; ${secrets.join(' and ')}`;
    const redacted = redact(text);
    for (const secret of secrets) expect(redacted).not.toContain(secret);
    expect(redacted).toContain('[redacted]');
  });

  it('keeps ordinary words of an error message', () => {
    const redact = credentialRedactor('http://127.0.0.1:4337/rpc');
    expect(redact('fetch failed: connect ECONNREFUSED 127.0.0.1:4337')).toBe(
      'fetch failed: connect ECONNREFUSED 127.0.0.1:4337',
    );
  });
});

describe('transportErrorText', () => {
  it('joins an error and its causes, outermost first, without repeats', () => {
    const inner = new Error('connect ECONNREFUSED 127.0.0.1:9');
    const outer = new TypeError('fetch failed', {
      cause: new Error('connect ECONNREFUSED 127.0.0.1:9', { cause: inner }),
    });
    expect(transportErrorText(outer)).toBe('fetch failed: connect ECONNREFUSED 127.0.0.1:9');
  });

  it('names an error without a message', () => {
    expect(transportErrorText('boom')).toBe('unknown transport error');
  });
});
