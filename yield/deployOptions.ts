import type { Address } from 'viem';
import type { ConfiguredNetwork, TokenDeployment } from '../chain/networkRegistry';

/**
 * What a network offers yield deployments: the vault factory, and the tokens a vault may be made for.
 * A token is permitted where the network has a staked vault over it that the vault can earn through;
 * today that is USDe staked as sUSDe (docs/yield.md "1. See what a network offers"). Other stablecoins would need a swap leg on every
 * deposit and withdrawal, whose slippage an ERC-4626 vault cannot promise back (docs/decisions.md).
 */

export interface PermittedYieldToken extends TokenDeployment {
  /** The ERC-4626 vault deposits of this token are staked in. */
  stakedVault: Address;
}

export interface YieldNetwork {
  network: ConfiguredNetwork;
  vaultFactory: Address;
  permittedTokens: PermittedYieldToken[];
}

/** Staked vault contract key (deployments file) per token symbol. */
const STAKED_VAULT_KEYS: Record<string, string> = { USDe: 'susde' };

/** The network's yield facts, or undefined when it has no vault factory or no permitted token. */
export function yieldNetworkOf(network: ConfiguredNetwork | undefined): YieldNetwork | undefined {
  const vaultFactory = network?.contracts.yieldVaultFactory;
  if (!network || !vaultFactory) return undefined;
  const permittedTokens = network.tokens.flatMap((token) => {
    const key = STAKED_VAULT_KEYS[token.symbol];
    const stakedVault = key ? network.contracts[key] : undefined;
    return stakedVault ? [{ ...token, stakedVault }] : [];
  });
  if (permittedTokens.length === 0) return undefined;
  return { network, vaultFactory, permittedTokens };
}
