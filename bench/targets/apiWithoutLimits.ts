import { serveApp } from './serveApp';
import type { SponsorshipLimits } from '../../paymaster/limits/limits';

/**
 * The same full Koa app as api.ts, except that the paymaster RPC's sponsorship limits admit every
 * operation: no merchant-limits read, no ETH/USD price read from the chain, no counter transaction,
 * nothing to release. The baseline for what exact accounting costs (bench/paymasterLimits.bench.ts);
 * built through `createApp`'s `sponsorshipLimits` hook, so every other middleware, check, the signer
 * call and the usage row are the production code. The usage rows it writes carry no USD snapshot
 * (price, estimated cost), as pricing is part of what it skips.
 */
const admitEverything: SponsorshipLimits = {
  check: async () => ({ ok: true }),
  room: async () => ({ budgets: [] }),
};

serveApp({ sponsorshipLimits: admitEverything });
