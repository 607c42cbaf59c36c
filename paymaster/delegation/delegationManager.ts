import type { Address } from 'viem';
import { publishedDelegationFramework, resolveDelegationFramework } from '../../chain/delegationFramework';
import type { Config } from '../../config';

/**
 * The delegation manager (ERC-7710) on `chainId`: PAYMASTER_DELEGATION_MANAGER_<chainId>, else
 * PAYMASTER_DELEGATION_MANAGER, else the deployments file's `delegationManager` (local chains), else
 * MetaMask's published deployment for the chain (the same address on every network it covers).
 */
export function delegationManagerFor(
  config: Config,
  chainId: number,
  contracts?: Record<string, Address>,
): Address {
  const override = (config as unknown as Record<string, string | undefined>)[
    `PAYMASTER_DELEGATION_MANAGER_${chainId}`
  ];
  const configured = override ?? config.PAYMASTER_DELEGATION_MANAGER;
  if (configured) return configured as Address;
  return (resolveDelegationFramework(chainId, contracts) ?? publishedDelegationFramework(MAINNET_CHAIN_ID)!)
    .delegationManager;
}

const MAINNET_CHAIN_ID = 1;
