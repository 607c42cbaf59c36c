import type { Address } from 'viem';
import type { Config } from '../config';

/** The delegation manager (ERC-7710) on `chainId`: PAYMASTER_DELEGATION_MANAGER_<chainId>, else PAYMASTER_DELEGATION_MANAGER. */
export function delegationManagerFor(config: Config, chainId: number): Address {
  const override = (config as unknown as Record<string, string | undefined>)[
    `PAYMASTER_DELEGATION_MANAGER_${chainId}`
  ];
  return (override ?? config.PAYMASTER_DELEGATION_MANAGER) as Address;
}
