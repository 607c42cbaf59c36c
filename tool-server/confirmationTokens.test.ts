import { CONFIRMATION_TOKEN_TTL_MS, createConfirmationTokens } from './confirmationTokens';

describe('confirmation tokens (security review II, finding 4)', () => {
  let clock = new Date('2026-11-26T12:00:00Z');
  const tokens = () => createConfirmationTokens({ now: () => clock });

  it('finding 4 — a confirmation token works once, for its tool and exact arguments, within its lifetime', () => {
    const store = tokens();
    const args = { payoutAddress: '0x1111111111111111111111111111111111111111', name: 'Tea' };
    const { token, expiresAt } = store.issue('update_profile', args);
    expect(expiresAt.getTime() - clock.getTime()).toBe(CONFIRMATION_TOKEN_TTL_MS);
    // Key order does not matter; values do.
    expect(store.redeem(token, 'update_profile', { name: 'Tea', payoutAddress: args.payoutAddress })).toBe(
      true,
    );
    expect(store.redeem(token, 'update_profile', args)).toBe(false);

    const other = store.issue('update_profile', args);
    expect(store.redeem(other.token, 'create_api_key', args)).toBe(false);
    // Spent by the wrong presentation.
    expect(store.redeem(other.token, 'update_profile', args)).toBe(false);

    const late = store.issue('update_profile', args);
    clock = new Date(clock.getTime() + CONFIRMATION_TOKEN_TTL_MS);
    expect(store.redeem(late.token, 'update_profile', args)).toBe(false);
    expect(store.redeem('cfm_made_up', 'update_profile', args)).toBe(false);
  });
});
