import {
  BaseError,
  ContractFunctionRevertedError,
  type ContractFunctionArgs,
  encodeFunctionData,
  getAddress,
  keccak256,
  parseEventLogs,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { YieldVaultFactory } from '../contracts/artifacts';
import type { OperatorChains, OperatorClient } from '../chain/operatorChains';
import { vaultSetIdOf } from '../chain/yieldVaultFactory';
import { awaitRecordedTransaction } from './flushTransactions';
import { signCallWithNonce, withNextNonce, type GasBound } from './lockedSends';
import type { Db } from '../db/client';
import type { YieldVaultRecord } from '../db/schema';
import {
  discardDeployTransaction,
  failYieldDeployment,
  findYieldDeploymentById,
  recordDeployTransaction,
  storeContractSetAndActivate,
  type YieldDeploymentRow,
} from '../db/yieldDeployments';
import {
  findHeldDeployCharge,
  releaseYieldDeployCharge,
  settleYieldDeployCharge,
} from '../db/yieldDeployCharges';
import { deployChargeMicroUsd } from '../yield/deployCharge';
import { yieldNetworkOf } from '../yield/deployOptions';
import { vaultNaming } from '../yield/vaultNaming';

/**
 * The on-chain step of a yield deployment: one factory transaction deploys the vault set. Like a flush
 * (activities/flushTransactions.ts) it is signed with the deployer's next nonce and recorded before it is
 * broadcast; a retry finds the record and brings that same transaction to a receipt. The factory itself
 * refuses a set id (the deployment id) the deployer already used, and a set already on chain is read back
 * instead of deployed: however often the step runs, one set exists.
 *
 * The transaction is signed within the gas bound its deploy was queued with (db/yieldDeployCharges.ts), so
 * it never costs more than the chain's daily budget and the merchant's prepaid hold counted; its actual cost
 * (gas used × the price paid; 0 when nothing was mined) settles that charge when the deploy ends.
 */

export type DeployVaultSetOutcome =
  | {
      status: 'deployed';
      txHash: string;
      vaults: YieldVaultRecord[];
      deployedAt: string;
      /** Wei the deploy transaction cost (decimal string). */
      gasCostWei: string;
    }
  /**
   * Reverted (its cost the mined transaction's), or refused before sending (cost 0: the factory would
   * revert, a staked vault's cooldown is on, or it needs more gas than its charge holds).
   */
  | { status: 'reverted'; reason: string; txHash?: string; gasCostWei: string }
  /** The deployment is no longer deploying (an operator settled it): nothing to do. */
  | { status: 'not_deploying' };

export interface YieldDeploymentActivities {
  deployVaultSet(input: { deploymentId: string }): Promise<DeployVaultSetOutcome>;
  /** `gasCostWei` settles the deploy's charge (absent in histories from before charges: nothing held). */
  activateYieldDeployment(input: {
    deploymentId: string;
    txHash: string;
    vaults: YieldVaultRecord[];
    deployedAt: string;
    gasCostWei?: string;
  }): Promise<{ contractSetId: string }>;
  failYieldDeployment(input: {
    deploymentId: string;
    reason: string;
    txHash?: string;
    gasCostWei?: string;
  }): Promise<void>;
}

export function createYieldDeploymentActivities({
  db,
  deployer,
}: {
  db: Db;
  /** The key that calls the factory, with a client per chain. */
  deployer: OperatorChains;
}): YieldDeploymentActivities {
  return {
    async deployVaultSet({ deploymentId }) {
      const deployment = await findYieldDeploymentById(db, deploymentId);
      if (deployment?.status !== 'deploying') {
        // Settled by an operator or put back by the API: nothing will be sent, so nothing stays held.
        await releaseYieldDeployCharge(db, { deploymentId });
        return { status: 'not_deploying' };
      }
      const plan = deploymentPlan(deployer, deployment);
      const client = deployer.client(deployment.chain_id);

      const existing = await readVaultSet(client, plan);
      if (existing.length > 0) return deployedOutcome(client, plan, existing, deployment.deploy_tx_hash);

      let recorded = deployment;
      if (!recorded.deploy_tx_hash) {
        // Refused before anything is sent: the reason is the revert the factory would give.
        const refusal = await simulateRefusal(client, plan);
        if (refusal) return { status: 'reverted', reason: refusal, gasCostWei: '0' };
        const bound = await gasBoundOf(db, client, deployment, plan);
        if (typeof bound === 'string') return { status: 'reverted', reason: bound, gasCostWei: '0' };
        recorded = await signAndRecord(db, client, recorded, plan, bound);
      }
      const receipt = await awaitRecordedDeploy(db, client, recorded);
      if (receipt === 'dropped')
        throw new Error(`deploy transaction of ${deploymentId} was dropped; signing again`);
      if (receipt.status !== 'success') {
        const reason =
          (await simulateRefusal(client, plan)) ?? `transaction ${receipt.transactionHash} reverted`;
        return {
          status: 'reverted',
          reason,
          txHash: receipt.transactionHash,
          gasCostWei: costOf(receipt).toString(),
        };
      }
      const [event] = parseEventLogs({
        abi: YieldVaultFactory.abi,
        logs: receipt.logs,
        eventName: 'VaultSetDeployed',
      });
      return deployedOutcome(client, plan, event!.args.vaults, receipt.transactionHash);
    },

    async activateYieldDeployment({ deploymentId, txHash, vaults, deployedAt, gasCostWei = '0' }) {
      // The charge first, while the deployment is still deploying: no new deploy (and charge) can start yet.
      await settleYieldDeployCharge(db, {
        deploymentId,
        costWei: BigInt(gasCostWei),
        txHash,
        chargeOf: deployChargeMicroUsd,
      });
      const deployment = await findYieldDeploymentById(db, deploymentId);
      if (!deployment) throw new Error(`yield deployment ${deploymentId} is gone`);
      const set = await storeContractSetAndActivate(db, {
        deploymentId,
        merchantId: deployment.merchant_id,
        chainId: deployment.chain_id,
        factory: deployer.network(deployment.chain_id).contracts.yieldVaultFactory!,
        txHash,
        vaults,
        deployedAt: new Date(deployedAt),
      });
      return { contractSetId: set.id };
    },

    async failYieldDeployment({ deploymentId, reason, txHash, gasCostWei = '0' }) {
      await settleYieldDeployCharge(db, {
        deploymentId,
        costWei: BigInt(gasCostWei),
        txHash: txHash ?? null,
        chargeOf: deployChargeMicroUsd,
      });
      await failYieldDeployment(db, deploymentId, reason);
    },
  };
}

interface DeploymentPlan {
  factory: Address;
  setId: Hex;
  args: ContractFunctionArgs<typeof YieldVaultFactory.abi, 'nonpayable', 'deployVaultSet'>;
  data: Hex;
  vaults: Omit<YieldVaultRecord, 'address'>[];
}

/** The factory call that deploys this deployment's vaults, one per token in the deployment's order. */
function deploymentPlan(deployer: OperatorChains, deployment: YieldDeploymentRow): DeploymentPlan {
  const yieldNetwork = yieldNetworkOf(deployer.network(deployment.chain_id));
  if (!yieldNetwork) throw new Error(`chain ${deployment.chain_id} has no yield vault factory configured`);
  const specs = deployment.tokens.map((symbol) => {
    const token = yieldNetwork.permittedTokens.find((permitted) => permitted.symbol === symbol);
    if (!token) throw new Error(`token ${symbol} is not permitted on chain ${deployment.chain_id}`);
    return { token, ...vaultNaming(deployment, symbol) };
  });
  const setId = vaultSetIdOf(deployment.id);
  const args = [
    setId,
    specs.map(({ token, name, shareSymbol }) => ({
      stakedVault: token.stakedVault,
      name,
      symbol: shareSymbol,
    })),
  ] as const;
  return {
    factory: yieldNetwork.vaultFactory,
    setId,
    args,
    data: encodeFunctionData({ abi: YieldVaultFactory.abi, functionName: 'deployVaultSet', args }),
    vaults: specs.map(({ token, name, shareSymbol }) => ({
      symbol: token.symbol,
      asset: getAddress(token.address),
      name,
      shareSymbol,
    })),
  };
}

function readVaultSet(client: OperatorClient, plan: DeploymentPlan): Promise<readonly Address[]> {
  return client.readContract({
    address: plan.factory,
    abi: YieldVaultFactory.abi,
    functionName: 'vaultSetOf',
    args: [client.account.address, plan.setId],
  });
}

async function deployedOutcome(
  client: OperatorClient,
  plan: DeploymentPlan,
  addresses: readonly Address[],
  knownTxHash: string | null,
): Promise<DeployVaultSetOutcome> {
  let txHash = knownTxHash;
  let blockNumber: bigint | undefined;
  const events = await client.getContractEvents({
    address: plan.factory,
    abi: YieldVaultFactory.abi,
    eventName: 'VaultSetDeployed',
    args: { deployer: client.account.address, setId: plan.setId },
    fromBlock: 'earliest',
  });
  if (events[0]) {
    txHash = events[0].transactionHash;
    blockNumber = events[0].blockNumber;
  }
  if (!txHash || blockNumber === undefined)
    throw new Error(`vault set ${plan.setId} has no VaultSetDeployed event yet`);
  const [block, receipt] = await Promise.all([
    client.getBlock({ blockNumber }),
    client.getTransactionReceipt({ hash: txHash as Hex }),
  ]);
  return {
    status: 'deployed',
    txHash,
    vaults: plan.vaults.map((vault, index) => ({ ...vault, address: getAddress(addresses[index]!) })),
    deployedAt: new Date(Number(block.timestamp) * 1000).toISOString(),
    gasCostWei: costOf(receipt).toString(),
  };
}

/** What a mined transaction cost its sender: gas used at the price paid. */
const costOf = (receipt: TransactionReceipt): bigint => receipt.gasUsed * receipt.effectiveGasPrice;

/**
 * The gas bound the deploy was queued with, or why it cannot be sent within it: no charge held (it was
 * given back, or queued before charges), or the set needs more gas than its charge holds.
 */
async function gasBoundOf(
  db: Db,
  client: OperatorClient,
  deployment: YieldDeploymentRow,
  plan: DeploymentPlan,
): Promise<GasBound | string> {
  const charge = await findHeldDeployCharge(db, deployment.id);
  if (!charge) return 'deployment refused: no deploy charge is held for it; deploy it again';
  const bound = { gas: BigInt(charge.gas_limit), maxFeePerGas: BigInt(charge.max_fee_per_gas) };
  const needed = await client.estimateGas({ account: client.account, to: plan.factory, data: plan.data });
  if (needed > bound.gas) {
    return `deployment refused: it needs ${needed} gas, more than the ${bound.gas} its charge holds (YIELD_DEPLOY_GAS_PER_VAULT per vault)`;
  }
  return bound;
}

/** The factory's revert reason for this call now, or undefined when it would succeed. */
async function simulateRefusal(client: OperatorClient, plan: DeploymentPlan): Promise<string | undefined> {
  try {
    await client.simulateContract({
      account: client.account,
      address: plan.factory,
      abi: YieldVaultFactory.abi,
      functionName: 'deployVaultSet',
      args: plan.args,
    });
    return undefined;
  } catch (error) {
    const reverted =
      error instanceof BaseError
        ? error.walk((cause) => cause instanceof ContractFunctionRevertedError)
        : null;
    if (!(reverted instanceof ContractFunctionRevertedError)) throw error;
    const why = reverted.data?.errorName ?? reverted.reason ?? 'no reason given';
    return `deployment reverted: ${why}`;
  }
}

/**
 * Signs the factory call with the deployer's next nonce, records it and broadcasts it under the deployer's
 * lock on this chain (activities/lockedSends.ts): workers sharing the key never take the same nonce. A
 * failed broadcast is left to awaitRecordedDeploy (sent again, or discarded when its nonce was taken).
 */
function signAndRecord(
  db: Db,
  client: OperatorClient,
  deployment: YieldDeploymentRow,
  plan: DeploymentPlan,
  bound: GasBound,
): Promise<YieldDeploymentRow> {
  return withNextNonce(db, client, async (nonce, locked) => {
    const rawTransaction = await signCallWithNonce(
      client,
      { to: plan.factory, data: plan.data },
      nonce,
      bound,
    );
    const txHash = keccak256(rawTransaction);
    await recordDeployTransaction(locked, deployment.id, { rawTransaction, txHash, nonce });
    await client.sendRawTransaction({ serializedTransaction: rawTransaction }).catch(() => undefined);
    return {
      ...deployment,
      deploy_raw_tx: rawTransaction,
      deploy_tx_hash: txHash,
      deploy_nonce: String(nonce),
    };
  });
}

/** The recorded deploy transaction brought to its receipt (activities/flushTransactions.ts). */
function awaitRecordedDeploy(
  db: Db,
  client: OperatorClient,
  deployment: YieldDeploymentRow,
): Promise<TransactionReceipt | 'dropped'> {
  return awaitRecordedTransaction(client, {
    hash: deployment.deploy_tx_hash as Hex,
    nonce: deployment.deploy_nonce,
    rawTransaction: deployment.deploy_raw_tx as Hex | null,
    what: 'deploy transaction',
    discard: () => discardDeployTransaction(db, deployment.id),
  });
}
