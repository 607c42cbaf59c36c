/** The local anvil chains of the dev stack and tests: the three testnets, under their real chain ids. */
export const LOCAL_CHAINS = [
  { chainId: 11155111, network: 'ethereum-sepolia' },
  { chainId: 84532, network: 'base-sepolia' },
  { chainId: 421614, network: 'arbitrum-sepolia' },
] as const;
