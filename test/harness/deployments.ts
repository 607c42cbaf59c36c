import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChainContracts } from '../../chain/deployments';
import { testStack } from './stack';

/**
 * Writes a deployments file for tests that need another shape of the world than the local chains:
 * mainnets that "have" the local contracts (session creation only computes addresses), or a chain
 * without a forwarder factory.
 */
export function writeDeploymentsFile(chains: ChainContracts[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'stablepay-deployments-')), 'deployments.json');
  writeFileSync(file, JSON.stringify({ chains }));
  return file;
}

/** The local chain contracts, copied under other chain ids (e.g. 1, 8453, 42161 for live-mode tests). */
export function localContractsAs(chainIds: number[], omit: string[] = []): ChainContracts[] {
  const template = testStack().chains[0]!.contracts;
  const contracts = Object.fromEntries(Object.entries(template).filter(([key]) => !omit.includes(key)));
  return chainIds.map((chainId) => ({ chainId, contracts }));
}
