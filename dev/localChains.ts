/**
 * The local anvil chains, under their real chain ids: the three testnets (sandbox sessions, `pmc_test_`
 * clients) and stand-ins for the three mainnets (live sessions, top-ups, `pmc_live_` clients), each with
 * the same contracts (docs/decisions.md "Foundation"). Layer-2s settle on their Ethereum (Sepolia) stand-in.
 */
export const LOCAL_CHAINS = [
  { chainId: 11155111, network: 'ethereum-sepolia' },
  { chainId: 84532, network: 'base-sepolia' },
  { chainId: 421614, network: 'arbitrum-sepolia' },
  { chainId: 1, network: 'ethereum' },
  { chainId: 8453, network: 'base' },
  { chainId: 42161, network: 'arbitrum' },
] as const;

export type LocalChainId = (typeof LOCAL_CHAINS)[number]['chainId'];

/** The testnet stand-ins only (what most tests need). */
export const LOCAL_TESTNET_CHAIN_IDS: LocalChainId[] = [11155111, 84532, 421614];

/** The test run's shared chains: the testnets and the Ethereum mainnet stand-in (live mode without a bridge). */
export const TEST_RUN_CHAIN_IDS: LocalChainId[] = [...LOCAL_TESTNET_CHAIN_IDS, 1];

/**
 * The chains `npm start` runs: all six, or those DEV_CHAIN_IDS lists (`11155111,84532`), for a smaller
 * stack (the replica test runs one beside the test run's own chains).
 */
export function localChainIdsFromEnv(value = process.env.DEV_CHAIN_IDS): LocalChainId[] {
  const known = LOCAL_CHAINS.map((chain) => chain.chainId as LocalChainId);
  if (value === undefined || value.trim() === '') return known;
  const asked = value.split(',').map((part) => part.trim());
  const unknown = asked.filter((part) => !known.some((chainId) => String(chainId) === part));
  if (unknown.length > 0 || asked.length === 0)
    throw new Error(`DEV_CHAIN_IDS lists chain ids of ${known.join(', ')}, not "${unknown.join(', ')}"`);
  return known.filter((chainId) => asked.includes(String(chainId)));
}
