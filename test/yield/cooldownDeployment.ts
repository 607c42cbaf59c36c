import type { Address } from 'viem';
import { LocalStakedUSDeV2 } from '../../contracts/artifacts';
import { ACCOUNTS, send, type SettlementChain } from '../chain/settlementFixture';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { SEVEN_DAYS, readVault, type AsyncVault } from './asyncVaultChain';
import { YIELD_CHAIN, startYieldWorld, waitFor, type YieldWorld } from './yieldWorld';

/**
 * A yield world whose YIELD_CHAIN is a private anvil with a LocalStakedUSDeV2 (Ethena's rules, a seven-day
 * cooldown) as its sUSDe, and one deployment made through the API by a signed-in merchant: its vault redeems
 * asynchronously (ERC-7540). The redeem-request tests (API and dashboard) start from here.
 */
export interface CooldownDeployment {
  world: YieldWorld;
  chain: SettlementChain;
  merchant: SignedInMerchant;
  deploymentId: string;
  vault: AsyncVault;
}

/**
 * An Ethena-like sUSDe (LocalStakedUSDeV2: per-address cooldowns, the silo) over the chain's USDe, owned by
 * the owner account, with its cooldown set to `cooldownSec`: the staked vault of a private yield chain.
 */
export async function deployCooldownSusde(own: SettlementChain, cooldownSec: number): Promise<Address> {
  const hash = await own.wallet('owner').deployContract({
    abi: LocalStakedUSDeV2.abi,
    bytecode: LocalStakedUSDeV2.bytecode,
    args: [own.contracts.usde, ACCOUNTS.owner.address],
  });
  const susde = (await own.publicClient.waitForTransactionReceipt({ hash })).contractAddress!;
  await send(own, 'owner', {
    address: susde,
    abi: LocalStakedUSDeV2.abi,
    functionName: 'setCooldownDuration',
    args: [cooldownSec],
  });
  return susde;
}

export const YIELD_BASE = '/v1/merchants/me/yield-deployments';

export async function startCooldownDeployment({
  name = 'Cooldown Savings',
  env,
}: { name?: string; env?: Record<string, string> } = {}): Promise<CooldownDeployment> {
  let chain: SettlementChain | undefined;
  const world = await startYieldWorld({
    env,
    privateChain: true,
    async prepareChain(own) {
      chain = own;
      return { susde: await deployCooldownSusde(own, SEVEN_DAYS) };
    },
  });
  const merchant = await signInNewMerchant(world.app);
  const call = (method: string, path: string, json?: unknown) =>
    world.app.request(`${YIELD_BASE}${path}`, {
      method,
      headers: merchant.auth,
      ...(json !== undefined && { json }),
    });
  const draft = await call('POST', '', { name, chainId: YIELD_CHAIN });
  if (draft.status !== 201) throw new Error(`draft: ${draft.status} ${JSON.stringify(draft.body)}`);
  const queued = await call('POST', `/${draft.body.id}/deploy`);
  if (queued.status !== 202) throw new Error(`deploy: ${queued.status} ${JSON.stringify(queued.body)}`);
  const deployed = await waitFor(
    async () => (await call('GET', `/${draft.body.id}`)).body,
    (body) => body.status !== 'deploying',
  );
  if (deployed.status !== 'active')
    throw new Error(`deployment ${deployed.status}: ${deployed.failureReason}`);
  const address = deployed.contracts.vaults[0].address as Address;
  const susde = await readVault<Address>({ chain: chain!, susde: address, vault: address }, 'stakedVault');
  return {
    world,
    chain: chain!,
    merchant,
    deploymentId: deployed.id,
    vault: { chain: chain!, susde, vault: address },
  };
}
