import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { getAddress, isAddress, type Address } from 'viem';
import { z } from 'zod';

/**
 * Per-chain contract addresses: the dev stack writes them to .dev/stack.json, production ships its
 * own file (DEPLOYMENTS_FILE). Same shape either way: `{ chains: [{ chainId, rpcUrl?, contracts }] }`.
 */
const address = z
  .string()
  .refine((value) => isAddress(value, { strict: false }), 'must be an address')
  .transform((value) => getAddress(value));

const deploymentsSchema = z.object({
  chains: z.array(
    z.object({
      chainId: z.number().int().positive(),
      rpcUrl: z.string().url().optional(),
      bundlerUrl: z.string().url().optional(),
      contracts: z.record(z.string(), address),
    }),
  ),
});

export interface ChainContracts {
  chainId: number;
  rpcUrl?: string;
  bundlerUrl?: string;
  contracts: Record<string, Address>;
}

export class DeploymentsFileError extends Error {
  override name = 'DeploymentsFileError';
}

/** Reads and validates a deployments file; an absent path means no chain has deployments. */
export function loadDeployments(path: string | undefined): ChainContracts[] {
  if (!path) return [];
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new DeploymentsFileError(`DEPLOYMENTS_FILE ${path} cannot be read: ${(error as Error).message}`);
  }
  const parsed = deploymentsSchema.safeParse(raw);
  if (!parsed.success) {
    throw new DeploymentsFileError(
      `DEPLOYMENTS_FILE ${path} is invalid: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
    );
  }
  return parsed.data.chains;
}

/** Writes a deployments file atomically (temporary file, then rename): a crash never leaves half of one. */
export function writeDeployments(path: string, chains: ChainContracts[]): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify({ chains }, null, 2)}\n`);
  renameSync(temporary, path);
}
