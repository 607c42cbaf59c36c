import { randomBytes } from 'node:crypto';
import { LOCAL_PAYMASTER_SIGNER } from '../../dev/chains/deployLocalChain';
import { loadConfig } from '../../config';
import { type SignerServer, startSignerServer } from '../../signer/server';
import { type TestApp, startTestApp } from '../harness/app';
import { localContractsAs, writeDeploymentsFile } from '../harness/deployments';
import { testStack } from '../harness/stack';

/**
 * Base mainnet (8453) for paymaster tests that need mainnet rules (prepaid balance, charges) with signed
 * data: the local contracts copied under 8453 and its RPC pointed at a local chain (its price feed,
 * gas fees and paymaster deposit), with a signing service of the test file's own that knows the chain.
 * Nothing signed for 8453 can be included on a local chain (the chain id is part of every hash), so
 * inclusions are fed to the receipt tracker's step directly.
 */
export const MAINNET_CHAIN_ID = 8453;

export interface MainnetStandIn {
  /** Environment for `startTestApp`: deployments, RPC and signer for 8453 (the local chains stay). */
  appEnv: Record<string, string>;
  stop(): Promise<void>;
}

export async function startMainnetStandIn(): Promise<MainnetStandIn> {
  const stack = testStack();
  const local = stack.chains.find((chain) => chain.chainId === 84532)!;
  const deploymentsFile = writeDeploymentsFile([...stack.chains, ...localContractsAs([MAINNET_CHAIN_ID])]);
  const rpcUrls = {
    ...Object.fromEntries(stack.chains.map((chain) => [`RPC_URL_${chain.chainId}`, chain.rpcUrl])),
    [`RPC_URL_${MAINNET_CHAIN_ID}`]: local.rpcUrl,
  };
  const sharedSecret = randomBytes(24).toString('hex');
  const signer: SignerServer = await startSignerServer({
    config: loadConfig({
      LOG_LEVEL: 'silent',
      SIGNER_PRIVATE_KEY: LOCAL_PAYMASTER_SIGNER.privateKey,
      SIGNER_SHARED_SECRET: sharedSecret,
      SIGNER_ERC20_TOKENS: JSON.stringify(stack.signer.erc20Tokens),
      // As the test stack's signer: the API under test runs on clocks of other days.
      SIGNER_MAX_VALIDITY_SEC: String(10 * 365 * 24 * 3600),
      DEPLOYMENTS_FILE: deploymentsFile,
      ...rpcUrls,
    }),
    port: 0,
  });
  return {
    appEnv: {
      DEPLOYMENTS_FILE: deploymentsFile,
      ...rpcUrls,
      SIGNER_URL: signer.url,
      SIGNER_SHARED_SECRET: sharedSecret,
    },
    stop: () => signer.stop(),
  };
}

/**
 * For a test file: runs the stand-in around the file's tests and answers how to start an app on it (the
 * local chains and 8453, this signer) with more configuration and a clock; the apps close with it.
 */
export function appsOnMainnetStandIn(): (env: Record<string, string>, now: () => Date) => Promise<TestApp> {
  let standIn: MainnetStandIn | undefined;
  const opened: TestApp[] = [];
  beforeAll(async () => {
    standIn = await startMainnetStandIn();
  });
  afterAll(async () => {
    await Promise.all(opened.map((app) => app.close()));
    await standIn?.stop();
  });
  return async (env, now) => {
    if (!standIn) throw new Error('the mainnet stand-in starts in beforeAll');
    const app = await startTestApp({ LOG_LEVEL: 'warn', ...standIn.appEnv, ...env }, { now });
    opened.push(app);
    return app;
  };
}
