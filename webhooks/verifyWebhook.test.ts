import { signWebhookPayload } from './signWebhookPayload';
import { verifyWebhook, WebhookVerificationError, type WebhookVerificationFailure } from './verifyWebhook';

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const rawBody = '{"id":"evt_0b7c","type":"session.confirming","data":{"session":{"amount":"19.99"}}}';
const sentAt = 1_700_000_000;
const now = new Date(sentAt * 1000);
const { header } = signWebhookPayload({ rawBody, secret, timestamp: sentAt });

function rejection(run: () => unknown): WebhookVerificationFailure {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
  throw new Error('verification passed');
}

describe('verifyWebhook', () => {
  it('accepts the service’s own signature and returns the parsed event', () => {
    expect(verifyWebhook(rawBody, header, secret, { now })).toEqual(JSON.parse(rawBody));
    expect(verifyWebhook(Buffer.from(rawBody), header, secret, { now })).toEqual(JSON.parse(rawBody));
  });

  it('accepts timestamps up to the tolerance on either side', () => {
    expect(() =>
      verifyWebhook(rawBody, header, secret, { now: new Date((sentAt + 300) * 1000) }),
    ).not.toThrow();
    expect(() =>
      verifyWebhook(rawBody, header, secret, { now: new Date((sentAt - 300) * 1000) }),
    ).not.toThrow();
  });

  it('rejects a body with one changed byte', () => {
    const tampered = rawBody.replace('19.99', '19.98');
    expect(rejection(() => verifyWebhook(tampered, header, secret, { now }))).toBe('signature_mismatch');
  });

  it('rejects the right body under a wrong secret', () => {
    expect(
      rejection(() =>
        verifyWebhook(rawBody, header, 'whsec_somebodyElsesSecretXXXXXXXXXXXXXXXXXXX', { now }),
      ),
    ).toBe('signature_mismatch');
  });

  it('rejects a stale timestamp (more than toleranceSec old)', () => {
    expect(
      rejection(() => verifyWebhook(rawBody, header, secret, { now: new Date((sentAt + 301) * 1000) })),
    ).toBe('timestamp_too_old');
    expect(
      rejection(() =>
        verifyWebhook(rawBody, header, secret, { now: new Date((sentAt + 61) * 1000), toleranceSec: 60 }),
      ),
    ).toBe('timestamp_too_old');
  });

  it('rejects a timestamp far in the future', () => {
    const future = signWebhookPayload({ rawBody, secret, timestamp: sentAt + 3600 });
    expect(rejection(() => verifyWebhook(rawBody, future.header, secret, { now }))).toBe(
      'timestamp_in_future',
    );
  });

  it('rejects a re-signed timestamp that does not match the signature', () => {
    const moved = header.replace(`t=${sentAt}`, `t=${sentAt + 1}`);
    expect(rejection(() => verifyWebhook(rawBody, moved, secret, { now }))).toBe('signature_mismatch');
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['without t=', header.replace(/t=\d+,/, '')],
    ['without v1=', `t=${sentAt}`],
    ['with a short signature', `t=${sentAt},v1=abcd`],
    ['with a non-numeric timestamp', header.replace(`t=${sentAt}`, 't=soon')],
  ])('rejects a header that is %s', (_case, value) => {
    expect(rejection(() => verifyWebhook(rawBody, value, secret, { now }))).toBe('malformed_header');
  });

  it('accepts when any of several v1 signatures matches and ignores unknown schemes', () => {
    const other = 'f'.repeat(64);
    expect(() =>
      verifyWebhook(rawBody, `t=${sentAt},v2=zzz,v1=${other},v1=${header.split('v1=')[1]}`, secret, { now }),
    ).not.toThrow();
    expect(rejection(() => verifyWebhook(rawBody, `t=${sentAt},v1=${other}`, secret, { now }))).toBe(
      'signature_mismatch',
    );
  });

  it('rejects a correctly signed body that is not JSON', () => {
    const text = 'not json';
    const signed = signWebhookPayload({ rawBody: text, secret, timestamp: sentAt });
    expect(rejection(() => verifyWebhook(text, signed.header, secret, { now }))).toBe('malformed_body');
  });
});
