import { type SettlementProtocols, deployLocalChain } from '../chains/deployLocalChain';
import { LOCAL_CHAINS, type LocalChainId } from '../localChains';
import type { ChainDeployment } from '../stackDescription';
import { startAltoBundlers } from './alto';
import { ANVIL_DEV_ACCOUNTS, startAnvilChains } from './anvil';

export interface StartLocalChainsParameters {
  /** Seconds between blocks; without it anvil mines each transaction at once (tests). */
  blockTime?: number;
  /** Block gas limit (anvil's default 30M when absent). */
  gasLimit?: number;
  /** Keeps chain state across restarts (the dev stack). */
  stateDir?: string;
  /** Start an Alto bundler per chain (the paymaster needs them; settlement does not). */
  bundlers?: boolean;
  /** Which local chains to start; all six by default (the dev stack). */
  chainIds?: readonly LocalChainId[];
  /**
   * The settlement protocols deployed: the fast local stand-ins or the real protocols. Defaults to
   * `LOCAL_SETTLEMENT_PROTOCOLS` (`stand-ins` or `real`), else `stand-ins`: `LOCAL_SETTLEMENT_PROTOCOLS=real npm start`.
   */
  protocols?: SettlementProtocols;
}

/** The settlement protocol set `LOCAL_SETTLEMENT_PROTOCOLS` asks for (the stand-ins when unset). */
export function settlementProtocolsFromEnv(
  value = process.env.LOCAL_SETTLEMENT_PROTOCOLS,
): SettlementProtocols {
  if (value === undefined || value === '' || value === 'stand-ins') return 'stand-ins';
  if (value === 'real') return 'real';
  throw new Error(`LOCAL_SETTLEMENT_PROTOCOLS must be "stand-ins" or "real", not "${value}"`);
}

export interface LocalChains {
  chains: ChainDeployment[];
  /** Resolves once any chain or bundler process exits, with which and how, stopped or not. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

/**
 * The local chains with everything deployed on them (EntryPoints, forwarder factory, tokens,
 * paymasters, settlement stand-ins) and optionally a bundler each: what the dev stack, the test run
 * and the benchmarks all start.
 */
export async function startLocalChains({
  blockTime,
  gasLimit,
  stateDir,
  bundlers = false,
  chainIds = LOCAL_CHAINS.map((chain) => chain.chainId),
  protocols = settlementProtocolsFromEnv(),
}: StartLocalChainsParameters = {}): Promise<LocalChains> {
  const anvil = await startAnvilChains({
    chains: chainIds.map((chainId) => ({ chainId })),
    blockTime,
    gasLimit,
    stateDir,
    silent: true,
  });
  try {
    const deployer = ANVIL_DEV_ACCOUNTS[0];
    const deployed: ChainDeployment[] = await Promise.all(
      anvil.chains.map(async ({ chainId, rpcUrl }) => ({
        chainId,
        network: LOCAL_CHAINS.find((chain) => chain.chainId === chainId)!.network,
        rpcUrl,
        contracts: await deployLocalChain({
          rpcUrl,
          chainId,
          deployerPrivateKey: deployer.privateKey,
          protocols,
        }),
      })),
    );
    if (!bundlers) return { chains: deployed, exited: anvil.exited, stop: anvil.stop };
    const alto = await startAltoBundlers({
      chains: deployed.map(({ chainId, rpcUrl, contracts }) => ({
        chainId,
        rpcUrl,
        entryPoints: [contracts.entryPointV07!, contracts.entryPointV08!],
      })),
      silent: true,
    });
    return {
      chains: deployed.map((chain) => ({
        ...chain,
        bundlerUrl: alto.bundlers.find((bundler) => bundler.chainId === chain.chainId)!.url,
      })),
      exited: Promise.race([anvil.exited, alto.exited]),
      stop: async () => {
        await alto.stop();
        await anvil.stop();
      },
    };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}
