import { readFileSync } from 'node:fs';
import type { Address } from 'viem';
import type { ChainDeployment } from '../../dev/stackDescription';

/** The services the global setup started once for this test run. */
export interface TestStack {
  /** The migrated database every test shares (tests isolate by their own rows). */
  databaseUrl: string;
  /** The server's admin database, for tests that need an empty database of their own. */
  adminDatabaseUrl: string;
  temporalAddress: string;
  temporalNamespace: string;
  /** Local chains with their contracts (paymasterV07/V08 included) and an Alto bundler each (`bundlerUrl`). */
  chains: (ChainDeployment & { bundlerUrl: string })[];
  /** MailDev: apps send e-mail to `smtpUrl` (SMTP_URL); tests read it at `<webUrl>/api/email`. */
  mail: { smtpUrl: string; webUrl: string };
  /** The paymaster signing service (signer/), running for the whole run; apps get it as SIGNER_URL. */
  signer: {
    url: string;
    sharedSecret: string;
    /** The paymasters' verifying signer. */
    address: Address;
    /** SIGNER_ERC20_TOKENS it runs with: chainId → token → exchange rate (base units per 1e18 wei). */
    erc20Tokens: Record<string, Record<string, string>>;
  };
}

export const TEST_STACK_FILE_VARIABLE = 'STABLEPAY_TEST_STACK_FILE';

let cached: TestStack | undefined;

/** Reads the description the global setup wrote; fails loudly when the suite runs without it. */
export function testStack(): TestStack {
  if (cached) return cached;
  const file = process.env[TEST_STACK_FILE_VARIABLE];
  if (!file)
    throw new Error(
      `${TEST_STACK_FILE_VARIABLE} is unset: run the tests with \`npm test\` (jest global setup)`,
    );
  cached = JSON.parse(readFileSync(file, 'utf8')) as TestStack;
  return cached;
}
