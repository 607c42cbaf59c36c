import { signWebhookPayload } from './signWebhookPayload';

// Computed outside this code: printf '%s' '1700000000.<body>' | openssl dgst -sha256 -hmac '<secret>'
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  timestamp: 1_700_000_000,
  rawBody: '{"id":"evt_1","type":"session.confirming"}',
  signature: 'c17285a72f24d697be3b85cb57a3ef5a491799593d301d006c5c8812578afd33',
};

describe('signWebhookPayload', () => {
  it('signs "<t>.<raw body>" with HMAC-SHA256 keyed by the whsec_ secret, hex encoded', () => {
    const signed = signWebhookPayload(VECTOR);
    expect(signed).toEqual({
      timestamp: VECTOR.timestamp,
      signature: VECTOR.signature,
      header: `t=${VECTOR.timestamp},v1=${VECTOR.signature}`,
    });
  });

  it('signs bytes and the same text identically', () => {
    const fromBytes = signWebhookPayload({ ...VECTOR, rawBody: Buffer.from(VECTOR.rawBody, 'utf8') });
    expect(fromBytes.signature).toBe(VECTOR.signature);
  });

  it('uses the current unix second when no timestamp is given', () => {
    const before = Math.floor(Date.now() / 1000);
    const { timestamp } = signWebhookPayload({ rawBody: '{}', secret: VECTOR.secret });
    expect(timestamp).toBeGreaterThanOrEqual(before);
    expect(timestamp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
  });

  it('refuses a timestamp that is not whole unix seconds', () => {
    expect(() => signWebhookPayload({ ...VECTOR, timestamp: 1.5 })).toThrow(RangeError);
    expect(() => signWebhookPayload({ ...VECTOR, timestamp: -1 })).toThrow(RangeError);
  });
});
