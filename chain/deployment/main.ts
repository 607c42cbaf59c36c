import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import {
  type Address,
  createNonceManager,
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  isAddress,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { jsonRpc } from 'viem/nonce';
import { z } from 'zod';
import { loadDeployments, writeDeployments } from '../deployments';
import { networkByChainId } from '../../config/networks';
import { canonicalAddresses } from './canonicalAddresses';
import { type ExternalContracts, deploySettlementContracts } from './deploySettlement';
import { type VerificationFinding, checkOnChain, compareWithCanonical } from './verifyDeployment';

/**
 * `tsx chain/deployment/main.ts deploy --chain <id> [--external external.json] [--deployments deployments.json]`
 * deploys and configures our contracts on one network and writes its entry of the deployments file.
 * `tsx chain/deployment/main.ts verify [--deployments deployments.json] [--chain <id>]` checks every (or one)
 * chain of the file: external addresses against the canonical ones, then the wiring on-chain; exits 1 on any
 * failed check. Keys and RPCs come from the environment (docs/deployment.md): DEPLOYER_PRIVATE_KEY,
 * RPC_URL_<chainId>, SETTLEMENT_OPERATOR_ADDRESS, PAYMASTER_SIGNER_ADDRESS.
 */

const address = z
  .string()
  .refine((value) => isAddress(value), 'must be an address')
  .transform((value) => getAddress(value));
const externalSchema = z
  .object({
    usdc: address,
    usdt: address,
    usde: address,
    usdeOft: address,
    susde: address.optional(),
    layerZeroEndpoint: address,
    uniswapSwapRouter02: address,
    entryPointV07: address,
    entryPointV08: address,
    priceFeed: address.optional(),
    poolFees: z.object({ usdc: z.number().int().positive(), usdt: z.number().int().positive() }),
  })
  .strict();

/** The chain's external contracts: the canonical ones, overlaid with the operator's file (`{ "<chainId>": { … } }`). */
export function externalContractsOf(
  chainId: number,
  overrides: Record<string, unknown> = {},
): ExternalContracts {
  const canonical = Object.fromEntries(
    Object.entries(canonicalAddresses(chainId)).map(([key, { address: value }]) => [key, value]),
  );
  const { uniswapV3Factory: _factory, ...defaults } = canonical;
  const parsed = externalSchema.safeParse({ poolFees: { usdc: 100, usdt: 100 }, ...defaults, ...overrides });
  if (!parsed.success)
    throw new Error(
      `external contracts of chain ${chainId}: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
    );
  return parsed.data;
}

function rpcUrlOf(chainId: number): string {
  const url = process.env[`RPC_URL_${chainId}`];
  if (!url) throw new Error(`RPC_URL_${chainId} is not set`);
  return url;
}

function chainOf(chainId: number) {
  const url = rpcUrlOf(chainId);
  return defineChain({
    id: chainId,
    name: networkByChainId(chainId)?.displayName ?? `chain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [url] } },
  });
}

function requiredAddress(variable: string): Address {
  const value = process.env[variable];
  if (!value || !isAddress(value)) throw new Error(`${variable} must be set to an address`);
  return getAddress(value);
}

async function deploy(
  chainId: number,
  externalFile: string | undefined,
  deploymentsFile: string,
): Promise<void> {
  const network = networkByChainId(chainId);
  if (!network) throw new Error(`chain ${chainId} is not one we settle on`);
  const overrides = externalFile
    ? (JSON.parse(readFileSync(externalFile, 'utf8')) as Record<string, Record<string, unknown>>)
    : {};
  const key = process.env.DEPLOYER_PRIVATE_KEY;
  if (!key) throw new Error('DEPLOYER_PRIVATE_KEY is not set');
  const account = privateKeyToAccount(key as `0x${string}`, {
    nonceManager: createNonceManager({ source: jsonRpc() }),
  });
  const chain = chainOf(chainId);
  const client = createWalletClient({ account, chain, transport: http() });
  const contracts = await deploySettlementContracts(client, {
    chainId,
    owner: account.address,
    operator: requiredAddress('SETTLEMENT_OPERATOR_ADDRESS'),
    paymasterSigner: requiredAddress('PAYMASTER_SIGNER_ADDRESS'),
    external: externalContractsOf(chainId, overrides[String(chainId)]),
    settlementExternal: externalContractsOf(
      network.settlementChainId,
      overrides[String(network.settlementChainId)],
    ),
  });
  const chains = existsSync(deploymentsFile) ? loadDeployments(deploymentsFile) : [];
  const entry = {
    chainId,
    contracts: Object.fromEntries(Object.entries(contracts).filter(([, value]) => value)),
  };
  writeDeployments(
    deploymentsFile,
    [...chains.filter((existing) => existing.chainId !== chainId), entry].sort(
      (a, b) => a.chainId - b.chainId,
    ),
  );
  process.stdout.write(`${JSON.stringify(entry, null, 2)}\nwritten to ${deploymentsFile}\n`);
}

/** Verifies every chain of the deployments file (or one); answers the findings. */
export async function verifyDeployments(
  deploymentsFile: string,
  only?: number,
): Promise<VerificationFinding[]> {
  const findings: VerificationFinding[] = [];
  for (const { chainId, contracts } of loadDeployments(deploymentsFile)) {
    if (only !== undefined && chainId !== only) continue;
    findings.push(...compareWithCanonical(chainId, contracts));
    const client = createPublicClient({ chain: chainOf(chainId), transport: http() });
    findings.push(...(await checkOnChain(client, { chainId, contracts })));
  }
  return findings;
}

if (require.main === module) {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      chain: { type: 'string' },
      external: { type: 'string' },
      deployments: { type: 'string', default: process.env.DEPLOYMENTS_FILE ?? 'deployments.json' },
    },
  });
  const command = positionals[0];
  const chainId = values.chain === undefined ? undefined : Number(values.chain);
  const run = async (): Promise<number> => {
    if (command === 'deploy') {
      if (chainId === undefined) throw new Error('deploy needs --chain <chainId>');
      await deploy(chainId, values.external, values.deployments!);
      return 0;
    }
    if (command === 'verify') {
      const findings = await verifyDeployments(values.deployments!, chainId);
      for (const finding of findings)
        process.stdout.write(
          `${finding.ok ? 'ok  ' : 'FAIL'} [${finding.chainId}] ${finding.check}: ${finding.detail}\n`,
        );
      const failed = findings.filter((finding) => !finding.ok).length;
      process.stdout.write(`${findings.length - failed} passed, ${failed} failed\n`);
      return failed === 0 ? 0 : 1;
    }
    throw new Error(
      'usage: chain/deployment/main.ts deploy --chain <id> [--external f] [--deployments f] | verify [--deployments f] [--chain <id>]',
    );
  };
  run().then(
    (code) => (process.exitCode = code),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
