import {
  type Account,
  type Address,
  type Chain,
  type Client,
  type Hex,
  type Transport,
  createNonceManager,
  createWalletClient,
  defineChain,
  http,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { getChainId } from 'viem/actions';
import { jsonRpc } from 'viem/nonce';
import type { EntryPointVersion } from '../../chain/entryPoints';
import { deployEntryPoint } from './entryPoints';
import { configureForwarderSettlement, deployForwarderFactory } from '../../chain/forwarderFactory';
import {
  LOCAL_RELAYER,
  LOCAL_SETTLEMENT_CHAIN_ID,
  LOCAL_SETTLEMENT_OPERATOR,
  type LocalSettlementAddresses,
  deployLocalSettlement,
  localForwarderSettlement,
  parRateE18,
  setLocalSwapRates,
} from './localSettlement';
import { STABLECOINS } from '../../chain/stablecoins';
import { deployLocalStablecoins } from './localStablecoins';
import { deployPaymaster, fundPaymaster } from '../../chain/deployment/paymasterDeployment';
import { LOCAL_PAYMASTER_FUNDING } from './localPaymasters';
import { networkByChainId } from '../../config/networks';
import { deployLocalPriceFeed } from './localPriceFeed';
import type { DelegationFrameworkContracts } from '../../chain/delegationFramework';
import { deployDelegationFramework } from './deployDelegationFramework';
import { ANVIL_DEV_ACCOUNTS } from '../services/anvil';
import { type RealSettlementAddresses, deployRealSettlement } from '../protocols/realSettlement';
import { deployYieldVaultFactory } from '../../chain/yieldVaultFactory';
import { withSendsInNonceOrder } from './sendsInNonceOrder';

/** The signing service's key on local chains (dev stack and tests): anvil's public dev account 9. */
export const LOCAL_PAYMASTER_SIGNER = ANVIL_DEV_ACCOUNTS[9];

export interface DeployLocalChainParameters {
  rpcUrl: string;
  chainId: number;
  /** Pays for the deployments; anvil's dev account 0 on local chains. */
  deployerPrivateKey: Hex;
  /** The paymasters' verifying signer; defaults to LOCAL_PAYMASTER_SIGNER. */
  paymasterSigner?: Address;
  /** The only account that may flush forwarders; defaults to LOCAL_SETTLEMENT_OPERATOR. */
  settlementOperator?: Address;
  /** The account the messenger accepts deliveries from; defaults to LOCAL_RELAYER. */
  relayer?: Address;
  /** Where this chain settles; defaults to the network's own settlement chain (Ethereum or Ethereum Sepolia). */
  settlementChainId?: number;
  /**
   * Which swap venue, bridge and sUSDe the forwarders settle through: our fast local `stand-ins`
   * (contracts/local/, the default) or the `real` protocols deployed from their npm packages (dev/protocols/).
   */
  protocols?: SettlementProtocols;
}

export type SettlementProtocols = 'stand-ins' | 'real';

/** Addresses of everything deployed on a local chain (the `contracts` of .dev/stack.json; a type, not an interface, so it fits `Record<string, Address>`). */
export type LocalChainDeployment = {
  entryPointV07: Address;
  entryPointV08: Address;
  forwarderFactory: Address;
  forwarderImplementation: Address;
  /** Deposit addresses of sessions that hold an overpayment (contracts/CappedForwarderFactory.sol). */
  cappedForwarderFactory: Address;
  cappedForwarderImplementation: Address;
  usdc: Address;
  usdt: Address;
  usde: Address;
  /** Managed paymasters, owned by the deployer, deposited and staked in their EntryPoint. */
  paymasterV07: Address;
  paymasterV08: Address;
  /** ETH/USD aggregator stand-in (8 decimals), owned by the deployer. */
  priceFeed: Address;
  /**
   * Deploys merchants' branded yield vault sets (contracts/yield/). Every stand-in chain has one (its stand-in
   * sUSDe has no cooldown, so the vaults redeem synchronously).
   */
  yieldVaultFactory: Address;
} & LocalSettlementAddresses &
  /** MetaMask's Delegation Framework (ERC-7710/7715), its manager owned by the deployer. */
  DelegationFrameworkContracts;

/** A chain of the real-protocol set: the same base contracts, Uniswap/LayerZero/sUSDe instead of the stand-ins. */
export type RealProtocolChainDeployment = Omit<
  LocalChainDeployment,
  keyof LocalSettlementAddresses | 'usde' | 'yieldVaultFactory'
> &
  RealSettlementAddresses & {
    /**
     * The settlement chain only, as in production: its Ethena-like sUSDe has the cooldown on, so the vaults redeem
     * asynchronously (ERC-7540); a layer-2 has no sUSDe to stake in and no factory.
     */
    yieldVaultFactory?: Address;
  };

export type DeployLocalChainReturnType = LocalChainDeployment | RealProtocolChainDeployment;

/**
 * Deploys our contracts and the protocol contracts we rely on to a local chain through the
 * deterministic deployer, skipping whatever is already there, and returns their addresses.
 */
export async function deployLocalChain(
  parameters: DeployLocalChainParameters & { protocols?: 'stand-ins' },
): Promise<LocalChainDeployment>;
export async function deployLocalChain(
  parameters: DeployLocalChainParameters & { protocols: 'real' },
): Promise<RealProtocolChainDeployment>;
export async function deployLocalChain(
  parameters: DeployLocalChainParameters,
): Promise<DeployLocalChainReturnType>;
export async function deployLocalChain({
  rpcUrl,
  chainId,
  deployerPrivateKey,
  paymasterSigner = LOCAL_PAYMASTER_SIGNER.address,
  settlementOperator = LOCAL_SETTLEMENT_OPERATOR.address,
  relayer = LOCAL_RELAYER.address,
  settlementChainId = networkByChainId(chainId)?.settlementChainId ?? LOCAL_SETTLEMENT_CHAIN_ID,
  protocols = 'stand-ins',
}: DeployLocalChainParameters): Promise<DeployLocalChainReturnType> {
  const client = createDeployerClient({ rpcUrl, chainId, deployerPrivateKey });
  const reported = await getChainId(client);
  if (reported !== chainId) throw new Error(`${rpcUrl} answers chain id ${reported}, expected ${chainId}`);

  // Contracts in one wave do not depend on each other and go out together (nonces from the account's
  // nonce manager). A contract whose constructor needs an earlier one goes in a later wave.
  const [entryPointV07, entryPointV08, forwarder, stablecoins, priceFeed, yieldVaultFactory] =
    await Promise.all([
      deployEntryPoint(client, { version: '0.7' }),
      deployEntryPoint(client, { version: '0.8' }),
      deployForwarderFactory(client, { owner: client.account.address }),
      deployLocalStablecoins(client),
      deployLocalPriceFeed(client, { owner: client.account.address }),
      protocols === 'real' && chainId !== settlementChainId
        ? Promise.resolve({})
        : deployYieldVaultFactory(client),
    ]);

  // The paymasters check their EntryPoint's interface in their constructor: second wave.
  const deployFundedPaymaster = async (version: EntryPointVersion): Promise<Address> => {
    const paymaster = await deployPaymaster(client, {
      version,
      owner: client.account.address,
      verifyingSigner: paymasterSigner,
    });
    await fundPaymaster(client, { paymaster, version, funding: LOCAL_PAYMASTER_FUNDING });
    return paymaster;
  };
  // The settlement stand-ins need USDe (the vault reads its decimals): second wave too, then the router's
  // par rates and the factory's settlement configuration, each sent only when it differs.
  const deployConfiguredSettlement = async (): Promise<LocalSettlementAddresses> => {
    const settlement = await deployLocalSettlement(client, {
      owner: client.account.address,
      usde: stablecoins.usde,
      relayer,
    });
    const usdeDecimals = STABLECOINS.find((token) => token.contractKey === 'usde')!.decimals;
    await Promise.all([
      setLocalSwapRates(client, {
        swapRouter: settlement.swapRouter,
        rates: STABLECOINS.filter((token) => token.contractKey !== 'usde').map((token) => ({
          tokenIn: stablecoins[token.contractKey],
          tokenOut: stablecoins.usde,
          rateE18: parRateE18({ decimalsIn: token.decimals, decimalsOut: usdeDecimals }),
        })),
      }),
      configureForwarderSettlement(client, {
        forwarderFactory: forwarder.forwarderFactory,
        settlement: localForwarderSettlement({
          usde: stablecoins.usde,
          settlement,
          operator: settlementOperator,
          settlementChainId,
        }),
      }),
    ]);
    return settlement;
  };
  const deployRealProtocols = async (): Promise<RealSettlementAddresses> => {
    const real = await deployRealSettlement(
      client,
      { chainId, owner: client.account.address, relayer, settlementChainId, operator: settlementOperator },
      stablecoins,
    );
    await configureForwarderSettlement(client, {
      forwarderFactory: forwarder.forwarderFactory,
      settlement: real.settlement,
    });
    return real.addresses;
  };
  // DeleGator accounts take user operations from EntryPoint v0.7: second wave as well.
  const [paymasterV07, paymasterV08, settlement, delegationFramework] = await Promise.all([
    deployFundedPaymaster('0.7'),
    deployFundedPaymaster('0.8'),
    protocols === 'real' ? deployRealProtocols() : deployConfiguredSettlement(),
    deployDelegationFramework(client, { owner: client.account.address, entryPoint: entryPointV07 }),
  ]);

  return {
    entryPointV07,
    entryPointV08,
    ...forwarder,
    ...stablecoins,
    paymasterV07,
    paymasterV08,
    ...settlement,
    ...priceFeed,
    ...yieldVaultFactory,
    ...delegationFramework,
    // The stand-in set carries the yield vault factory everywhere, the real set on its settlement chain (see the types).
  } as DeployLocalChainReturnType;
}

function createDeployerClient({
  rpcUrl,
  chainId,
  deployerPrivateKey,
}: DeployLocalChainParameters): Client<Transport, Chain, Account> {
  // A nonce manager per call: viem's shared one would remember nonces of an earlier chain with the same id.
  const account = privateKeyToAccount(deployerPrivateKey, {
    nonceManager: createNonceManager({ source: jsonRpc() }),
  });
  const chain = defineChain({
    id: chainId,
    name: `Local chain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  return withSendsInNonceOrder(
    createWalletClient({
      account,
      chain,
      transport: http(rpcUrl),
      pollingInterval: 200,
    }),
  );
}
