import {
  type Address,
  type Client,
  erc20Abi,
  getAddress,
  isAddressEqual,
  keccak256,
  toHex,
  zeroAddress,
} from 'viem';
import { getCode, readContract, simulateContract } from 'viem/actions';
import {
  ForwarderFactory,
  IStakedUSDe,
  IUniswapV3Factory,
  IV3SwapRouter,
  LayerZeroSettlementMessenger,
  LayerZeroStakingComposer,
  UniswapV3SwapAdapter,
  YieldVaultFactory,
} from '../../contracts/artifacts';
import { layerZeroEndpointAbi, oappAbi } from '../layerZero';
import { networkByChainId } from '../../config/networks';
import { yieldVaultFactoryAddress } from '../yieldVaultFactory';
import { type CanonicalKey, canonicalAddresses } from './canonicalAddresses';

/**
 * The deployment check an operator runs before taking payments (and after any change to the deployments file):
 * every configured external address is the canonical one, and the contracts are wired to each other as
 * settlement needs. Each finding names what was checked; `ok` false is a reason not to go live.
 */
export interface VerificationFinding {
  chainId: number;
  check: string;
  ok: boolean;
  detail: string;
}

/** Configured external addresses against the canonical ones (chain/deployment/canonicalAddresses.ts). No network needed. */
export function compareWithCanonical(
  chainId: number,
  contracts: Record<string, Address>,
): VerificationFinding[] {
  const canonical = canonicalAddresses(chainId);
  return (Object.entries(canonical) as [CanonicalKey, { address: Address; source: string }][]).map(
    ([key, expected]) => {
      const configured = contracts[key];
      if (!configured)
        return {
          chainId,
          check: `${key} is configured`,
          ok: false,
          detail: `missing; expected ${expected.address} (${expected.source})`,
        };
      const ok = isAddressEqual(configured, expected.address);
      return {
        chainId,
        check: `${key} is canonical`,
        ok,
        detail: ok
          ? `${configured} (${expected.source})`
          : `${configured} is not ${expected.address} (${expected.source})`,
      };
    },
  );
}

/** What each on-chain check reads with: the chain's client and network, and the deployments' addresses. */
interface ChainReads {
  client: Client;
  network: NonNullable<ReturnType<typeof networkByChainId>>;
  /** A deployments-file address; throws (failing the check) when it is missing. */
  need(key: string): Address;
}

/** One named check: its detail when it holds; it throws with the reason when it does not. */
type OnChainCheck = [name: string, run: () => Promise<string>];

const CODE_KEYS = ['entryPointV07', 'entryPointV08', 'forwarderFactory', 'usdc', 'usdt', 'usde'];

/**
 * Reads the chain: the endpoint's id, the OFT's endpoint, token and peer, sUSDe's asset and cooldown (through
 * Ethena's published signatures), the swap adapter's router and pools, the messenger's route, the composer's
 * wiring, the yield vault factory (only where sUSDe is: it deploys a vault over it), and the forwarder factory's
 * settlement configuration.
 */
export async function checkOnChain(
  client: Client,
  { chainId, contracts }: { chainId: number; contracts: Record<string, Address> },
): Promise<VerificationFinding[]> {
  const network = networkByChainId(chainId);
  if (!network)
    return [
      { chainId, check: 'known network', ok: false, detail: `chain ${chainId} is not one we settle on` },
    ];
  const need = (key: string): Address => {
    const address = contracts[key];
    if (!address) throw new Error(`${key} is not in the deployments file`);
    return address;
  };
  const reads: ChainReads = { client, network, need };
  const onSettlementChain = network.settlementChainId === chainId;

  const findings = await runChecks(chainId, [
    ...CODE_KEYS.map((key): OnChainCheck => [`${key} has code`, () => hasCode(reads, key)]),
    ['LayerZero endpoint id', () => endpointId(reads)],
    ['USDe OFT endpoint and token', () => oftEndpointAndToken(reads)],
    ['swap adapter router', () => swapAdapterRouter(reads)],
  ]);
  const factoryV3 = await readContract(client, {
    address: need('uniswapSwapRouter02'),
    abi: IV3SwapRouter.abi,
    functionName: 'factory',
  }).catch(() => undefined);
  findings.push(
    ...(await runChecks(chainId, [
      ...['usdc', 'usdt'].map((token): OnChainCheck => [
        `${token} → USDe pool`,
        () => swapPool(reads, token, factoryV3),
      ]),
      ...(onSettlementChain
        ? ([
            ['sUSDe is an ERC-4626 over USDe with Ethena’s cooldown interface', () => stakedUsdeVault(reads)],
            ['staking composer wiring', () => stakingComposerWiring(reads)],
            ['yield vault factory deploys vaults over sUSDe', () => yieldVaultFactoryOverStakedUsde(reads)],
          ] satisfies OnChainCheck[])
        : ([
            ['messenger route to the settlement chain', () => messengerRoute(reads)],
            ['no yield vault factory without an sUSDe to stake in', () => noYieldVaultFactory(contracts)],
          ] satisfies OnChainCheck[])),
      [
        'forwarder factory settlement configuration',
        () => forwarderFactorySettlement(reads, onSettlementChain),
      ],
    ])),
  );
  return findings;
}

/** Runs the checks one after another: each a finding, failed with the first line of what it threw. */
async function runChecks(chainId: number, checks: OnChainCheck[]): Promise<VerificationFinding[]> {
  const findings: VerificationFinding[] = [];
  for (const [name, run] of checks) {
    try {
      findings.push({ chainId, check: name, ok: true, detail: await run() });
    } catch (error) {
      findings.push({
        chainId,
        check: name,
        ok: false,
        detail: error instanceof Error ? error.message.split('\n')[0]! : String(error),
      });
    }
  }
  return findings;
}

const same = (actual: Address, expected: Address, what: string) => {
  if (!isAddressEqual(actual, expected)) throw new Error(`${what} is ${actual}, expected ${expected}`);
  return `${what} ${expected}`;
};

async function hasCode({ client, need }: ChainReads, key: string): Promise<string> {
  const code = await getCode(client, { address: need(key) });
  if (!code || code === '0x') throw new Error(`no code at ${need(key)}`);
  return need(key);
}

async function endpointId({ client, network, need }: ChainReads): Promise<string> {
  const eid = await readContract(client, {
    address: need('layerZeroEndpoint'),
    abi: layerZeroEndpointAbi,
    functionName: 'eid',
  });
  if (eid !== network.layerZeroEid)
    throw new Error(`endpoint eid is ${eid}, expected ${network.layerZeroEid}`);
  return `eid ${eid}`;
}

async function oftEndpointAndToken({ client, need }: ChainReads): Promise<string> {
  const [endpoint, token] = await Promise.all([
    readContract(client, { address: need('usdeOft'), abi: oappAbi, functionName: 'endpoint' }),
    readContract(client, { address: need('usdeOft'), abi: oappAbi, functionName: 'token' }),
  ]);
  same(endpoint, need('layerZeroEndpoint'), 'OFT endpoint');
  return same(token, need('usde'), 'OFT token');
}

async function swapAdapterRouter({ client, need }: ChainReads): Promise<string> {
  const router = await readContract(client, {
    address: need('swapRouter'),
    abi: UniswapV3SwapAdapter.abi,
    functionName: 'router',
  });
  return same(router, need('uniswapSwapRouter02'), 'adapter router');
}

/** The swap adapter's pool for `token` → USDe exists on Uniswap v3, with its depth. */
async function swapPool(
  { client, need }: ChainReads,
  token: string,
  factoryV3: Address | undefined,
): Promise<string> {
  const fee = await readContract(client, {
    address: need('swapRouter'),
    abi: UniswapV3SwapAdapter.abi,
    functionName: 'poolFee',
    args: [need(token), need('usde')],
  });
  if (fee === 0) throw new Error(`the swap adapter has no pool fee for ${token}`);
  if (!factoryV3) throw new Error('SwapRouter02 did not answer factory()');
  const pool = await readContract(client, {
    address: factoryV3,
    abi: IUniswapV3Factory.abi,
    functionName: 'getPool',
    args: [need(token), need('usde'), fee],
  });
  if (pool === zeroAddress) throw new Error(`no Uniswap v3 pool ${token}/USDe at fee ${fee}`);
  const [tokenDepth, usdeDepth] = await Promise.all([
    readContract(client, { address: need(token), abi: erc20Abi, functionName: 'balanceOf', args: [pool] }),
    readContract(client, { address: need('usde'), abi: erc20Abi, functionName: 'balanceOf', args: [pool] }),
  ]);
  return `pool ${pool} (fee ${fee}) holds ${tokenDepth} ${token} and ${usdeDepth} USDe base units`;
}

async function stakedUsdeVault({ client, need }: ChainReads): Promise<string> {
  const [asset, cooldown, preview] = await Promise.all([
    readContract(client, { address: need('susde'), abi: IStakedUSDe.abi, functionName: 'asset' }),
    readContract(client, { address: need('susde'), abi: IStakedUSDe.abi, functionName: 'cooldownDuration' }),
    readContract(client, {
      address: need('susde'),
      abi: IStakedUSDe.abi,
      functionName: 'previewDeposit',
      args: [10n ** 18n],
    }),
  ]);
  same(asset, need('usde'), 'sUSDe asset');
  return `asset USDe, cooldown ${cooldown} s, 1 USDe → ${preview} shares`;
}

async function stakingComposerWiring({ client, need }: ChainReads): Promise<string> {
  const composer = need('stakingComposer');
  const [endpoint, oft, vault] = await Promise.all([
    readContract(client, { address: composer, abi: LayerZeroStakingComposer.abi, functionName: 'endpoint' }),
    readContract(client, { address: composer, abi: LayerZeroStakingComposer.abi, functionName: 'oft' }),
    readContract(client, {
      address: composer,
      abi: LayerZeroStakingComposer.abi,
      functionName: 'stakedUsde',
    }),
  ]);
  same(endpoint, need('layerZeroEndpoint'), 'composer endpoint');
  same(oft, need('usdeOft'), 'composer OFT');
  return same(vault, need('susde'), 'composer vault');
}

/** An eth_call sender for the simulated vault deployment: any address works, the factory salts by the caller. */
const VERIFICATION_CALLER: Address = '0x000000000000000000000000000000000000dEaD';

/**
 * The factory is this checkout's (its deterministic address pins its code, so the worker's ABI fits it), and it
 * deploys a vault over the configured sUSDe: a simulated `deployVaultSet` runs the vault's constructor against
 * the real sUSDe without sending anything. The cooldown says how those vaults will redeem.
 */
async function yieldVaultFactoryOverStakedUsde({ client, need }: ChainReads): Promise<string> {
  const factory = need('yieldVaultFactory');
  same(factory, yieldVaultFactoryAddress(), 'yield vault factory');
  const code = await getCode(client, { address: factory });
  if (!code || code === '0x') throw new Error(`no code at the yield vault factory ${factory}`);
  const { result } = await simulateContract(client, {
    address: factory,
    abi: YieldVaultFactory.abi,
    functionName: 'deployVaultSet',
    args: [
      keccak256(toHex('stablepay.deployment.verification')),
      [{ stakedVault: need('susde'), name: 'Verification USDe Vault', symbol: 'vUSDe' }],
    ],
    account: VERIFICATION_CALLER,
  });
  const cooldown = await readContract(client, {
    address: need('susde'),
    abi: IStakedUSDe.abi,
    functionName: 'cooldownDuration',
  });
  const redemption =
    cooldown === 0 ? 'synchronous ERC-4626' : `asynchronous ERC-7540 (sUSDe cooldown ${cooldown} s)`;
  return `factory ${factory} deploys a vault over sUSDe ${need('susde')} (simulated, would be ${result[0]}); redemption ${redemption}`;
}

/** deploy-options offers every chain with a factory: one where no sUSDe is configured must not have one. */
async function noYieldVaultFactory(contracts: Record<string, Address>): Promise<string> {
  if (contracts.yieldVaultFactory)
    throw new Error(
      `yieldVaultFactory ${contracts.yieldVaultFactory} is configured, but the chain has no sUSDe for its vaults`,
    );
  return 'none configured';
}

async function messengerRoute({ client, network, need }: ChainReads): Promise<string> {
  const messenger = need('messenger');
  const settlementEid = networkByChainId(network.settlementChainId)!.layerZeroEid;
  const [oft, route, peer] = await Promise.all([
    readContract(client, { address: messenger, abi: LayerZeroSettlementMessenger.abi, functionName: 'oft' }),
    readContract(client, {
      address: messenger,
      abi: LayerZeroSettlementMessenger.abi,
      functionName: 'routeOf',
      args: [BigInt(network.settlementChainId)],
    }),
    readContract(client, {
      address: need('usdeOft'),
      abi: oappAbi,
      functionName: 'peers',
      args: [settlementEid],
    }),
  ]);
  same(oft, need('usdeOft'), 'messenger OFT');
  if (route.eid !== settlementEid) throw new Error(`route eid is ${route.eid}, expected ${settlementEid}`);
  if (BigInt(peer) === 0n) throw new Error(`the USDe OFT has no peer for eid ${settlementEid}`);
  return `eid ${route.eid}, compose gas ${route.composeGas}, OFT peer ${peer}`;
}

async function forwarderFactorySettlement(
  { client, network, need }: ChainReads,
  onSettlementChain: boolean,
): Promise<string> {
  const settlement = await readContract(client, {
    address: need('forwarderFactory'),
    abi: ForwarderFactory.abi,
    functionName: 'settlement',
  });
  if (Number(settlement.settlementChainId) !== network.settlementChainId)
    throw new Error(`settles on ${settlement.settlementChainId}, expected ${network.settlementChainId}`);
  same(settlement.swapRouter, need('swapRouter'), 'swapRouter');
  same(settlement.usde, need('usde'), 'usde');
  if (onSettlementChain) same(settlement.stakedUsde, need('susde'), 'stakedUsde');
  else same(settlement.messenger, need('messenger'), 'messenger');
  if (settlement.operator === zeroAddress) throw new Error('no operator');
  return `operator ${getAddress(settlement.operator)}, composer ${settlement.settlementComposer}, max slippage ${settlement.maxSlippageBps} bps`;
}
