import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { type Hex, encodeFunctionData, erc20Abi, getAddress, numberToHex, parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { LOCAL_PAYMASTER_SIGNER } from '../dev/chains/deployLocalChain';
import { encodeDeleGatorExecute, hybridDeleGatorAccount } from '../chain/deleGatorAccounts';
import { delegationFrameworkFromContracts } from '../chain/delegationFramework';
import {
  ROOT_AUTHORITY,
  type UnsignedDelegation,
  delegationTypedData,
  encodePermissionContext,
  encodeRedeemDelegation,
  erc20TransferPermissionCaveats,
} from '../chain/delegations';
import { createDb } from '../db/client';
import { upsertAllowlistEntry } from '../db/paymasterPolicies';
import { benchWalletClient } from './lib/chainClients';
import {
  CHAIN_ID,
  GENEROUS_PAYMASTER_LIMITS,
  SENDER,
  expectSignedResult,
  measureRpcLoad,
  printFigures,
  rpcBodies,
  seedSponsoringMerchant,
} from './lib/paymasterRpc';
import { reportBenchmark } from './lib/results';
import { machineLoad, measureAtSteadyLoad } from './lib/rounds';
import { startBenchServices } from './lib/services';
import { startTarget, type BenchTarget } from './lib/target';

/**
 * What SPEC rule 7 costs a wallet: `pm_getPaymasterData` for a delegated ERC-20 transfer (a session
 * account's `redeemDelegations` of an owner's root delegation, wrapped in ERC-7579 SingleDefault) against
 * the plain single-call operation of bench/paymaster.bench.ts, same api and signer processes, same run,
 * one load generator (autocannon, 32 connections), alternating plain / delegated twice. The delegated
 * path adds the decoding of the redemption and its caveats, the owner's deny rules and limit counters,
 * and the owner's signature checked on the chain: here the owner is a deployed HybridDeleGator, so every
 * request reads its code and calls its ERC-1271 `isValidSignature` on the local anvil chain.
 */

const CONNECTIONS = 32;
const DURATION_SEC = 10;
const LOAD = { connections: CONNECTIONS, durationSec: DURATION_SEC };
const ROUNDS = 2;

const ratio = (subject: number, baseline: number) => subject / Math.max(baseline, 0.001);
const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

async function main(): Promise<void> {
  const started = performance.now();
  const cleanups: (() => Promise<unknown>)[] = [];
  const stopLater = (target: BenchTarget) => {
    cleanups.unshift(() => target.stop());
    return target;
  };
  try {
    const services = await startBenchServices({ chains: true });
    cleanups.unshift(() => services.stop());
    const db = createDb({ connectionString: services.databaseUrl, maxConnections: 2 });
    cleanups.unshift(() => db.destroy().then(() => delay(300)));
    const { merchantId, clientId } = await seedSponsoringMerchant(db);

    // The owner: a HybridDeleGator deployed on the bench chain, granting SENDER a USDC allowance to a payee.
    const chain = services.chains.find((candidate) => candidate.chainId === CHAIN_ID)!;
    const framework = delegationFrameworkFromContracts(chain.contracts)!;
    const token = getAddress(chain.contracts.usdc!);
    await upsertAllowlistEntry(db, {
      merchantId,
      chainId: CHAIN_ID,
      contractAddress: token.toLowerCase(),
      label: 'bench token',
    });
    const funderKey = generatePrivateKey();
    const funder = benchWalletClient(chain.rpcUrl, CHAIN_ID, funderKey);
    await funder.request({
      method: 'anvil_setBalance' as never,
      params: [funder.account.address, numberToHex(parseEther('10'))] as never,
    });
    const owner = privateKeyToAccount(generatePrivateKey());
    const ownerAccount = hybridDeleGatorAccount({ owner: owner.address, framework });
    await funder.waitForTransactionReceipt({
      hash: await funder.sendTransaction({ to: ownerAccount.factory, data: ownerAccount.factoryData }),
    });
    const payee = getAddress(`0x${randomBytes(20).toString('hex')}`);
    const delegation: UnsignedDelegation = {
      delegate: SENDER,
      delegator: ownerAccount.address,
      authority: ROOT_AUTHORITY,
      caveats: erc20TransferPermissionCaveats(framework, {
        token,
        allowance: 1_000_000_000n,
        payee,
        validUntil: BigInt(Math.floor(Date.now() / 1000) + 24 * 3600),
        redeemer: SENDER,
        nonce: 0n,
      }),
      salt: 1n,
    };
    const signature = await owner.signTypedData(
      delegationTypedData(delegation, { chainId: CHAIN_ID, delegationManager: framework.delegationManager }),
    );
    const delegatedCallData: Hex = encodeDeleGatorExecute({
      target: framework.delegationManager,
      value: 0n,
      data: encodeRedeemDelegation({
        permissionContext: encodePermissionContext([{ ...delegation, signature }]),
        execution: {
          target: token,
          value: 0n,
          data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [payee, 1_000_000n] }),
        },
      }),
    });

    const sharedSecret = randomBytes(32).toString('hex');
    const signer = stopLater(
      await startTarget('signer.ts', [], {
        ...services.env,
        SIGNER_PRIVATE_KEY: LOCAL_PAYMASTER_SIGNER.privateKey,
        LOG_LEVEL: 'info',
        SIGNER_SHARED_SECRET: sharedSecret,
      }),
    );
    const api = stopLater(
      await startTarget('api.ts', [], {
        ...services.env,
        LOG_LEVEL: 'info',
        SIGNER_URL: signer.url,
        SIGNER_SHARED_SECRET: sharedSecret,
        // One sender (and one owner) sends every request: limits stay active but never refuse, and the
        // client's request rate is not what is measured (on a quiet machine it refused every request).
        ...GENEROUS_PAYMASTER_LIMITS,
      }),
    );
    const rpcUrl = `${api.url}/v1/paymaster/rpc`;
    const headers = { 'x-client-id': clientId };
    const plainBodies = rpcBodies('pm_getPaymasterData');
    const delegatedBodies = rpcBodies('pm_getPaymasterData', delegatedCallData);
    // Both answer paymaster data signed by the verifying signer for their own operation.
    await expectSignedResult(rpcUrl, headers, plainBodies());
    await expectSignedResult(rpcUrl, headers, delegatedBodies());

    const measure = (nextBody: () => string) =>
      measureRpcLoad({ url: api.url, path: '/v1/paymaster/rpc', headers, nextBody, ...LOAD });
    const machineAtStart = machineLoad();
    const plainRuns = [];
    const delegatedRuns = [];
    const roundLoads = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const { value, load } = await measureAtSteadyLoad(
        async () => ({ plain: await measure(plainBodies), delegated: await measure(delegatedBodies) }),
        `round ${round + 1}`,
      );
      plainRuns.push(value.plain);
      delegatedRuns.push(value.delegated);
      roundLoads.push(load);
    }

    process.stdout.write(
      `\n  ${CONNECTIONS} connections, ${DURATION_SEC} s each after a 1 s warm-up, ${ROUNDS} rounds\n`,
    );
    plainRuns.forEach((figures, round) =>
      printFigures(`baseline: plain single call (round ${round + 1})`, figures),
    );
    delegatedRuns.forEach((figures, round) =>
      printFigures(`subject: delegated transfer (round ${round + 1})`, figures),
    );
    const plainRps = mean(plainRuns.map((figures) => figures.requestsPerSec));
    const delegatedRps = mean(delegatedRuns.map((figures) => figures.requestsPerSec));
    const plainP99 = mean(plainRuns.map((figures) => figures.latencyP99Ms));
    const delegatedP99 = mean(delegatedRuns.map((figures) => figures.latencyP99Ms));
    for (const figures of [...plainRuns, ...delegatedRuns]) {
      if (figures.firstJsonRpcError)
        process.stdout.write(`  first JSON-RPC error: ${figures.firstJsonRpcError}\n`);
    }

    reportBenchmark('delegatedTransfers', {
      load: { connections: CONNECTIONS, durationSec: DURATION_SEC, warmUpSec: 1, rounds: ROUNDS },
      notes: [
        'Same api and signer processes, same sender, alternating runs; every request has a unique nonce.',
        'The delegated owner is a deployed HybridDeleGator: every delegated request reads its code and calls its ERC-1271 isValidSignature on the local chain.',
        "The delegated path consumes the owner's per-account limit counters besides the sender's.",
      ],
      machine: { atStart: machineAtStart, atEnd: machineLoad(), rounds: roundLoads },
      plain: plainRuns,
      delegated: delegatedRuns,
      wallSeconds: (performance.now() - started) / 1000,
      ratios: {
        throughputDelegatedVsPlain: ratio(delegatedRps, plainRps),
        p99LatencyDelegatedVsPlain: ratio(delegatedP99, plainP99),
      },
    });
    const failures = [...plainRuns, ...delegatedRuns].reduce(
      (sum, figures) => sum + figures.non2xx + figures.errors + figures.jsonRpcErrors,
      0,
    );
    if (failures > 0) {
      process.stdout.write(`  FAILED: ${failures} failed requests\n`);
      process.exitCode = 1;
    }
    process.stdout.write(`  wall time ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  } finally {
    for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  }
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
