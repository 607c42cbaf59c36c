import { startTestApp, type TestApp } from './app';
import { signInNewMerchant, type SignedInMerchant } from './merchants';

/**
 * Two api instances on one database, and a merchant signed in through the first: what the tests of the
 * LISTEN/NOTIFY-invalidated caches (sk_ keys, paymaster clients) change on one and read on the other.
 * Registers its own beforeAll and afterAll; the fields are set once beforeAll has run.
 */
export function twoApiInstances(): { first: TestApp; second: TestApp; merchant: SignedInMerchant } {
  const instances = {} as { first: TestApp; second: TestApp; merchant: SignedInMerchant };
  beforeAll(async () => {
    [instances.first, instances.second] = await Promise.all([startTestApp(), startTestApp()]);
    instances.merchant = await signInNewMerchant(instances.first);
  });
  afterAll(async () => {
    await Promise.all([instances.first?.close(), instances.second?.close()]);
  });
  return instances;
}

/** Polls a synchronous condition every 20 ms; fails naming `what` after `timeoutMs`. */
export async function waitUntil(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
