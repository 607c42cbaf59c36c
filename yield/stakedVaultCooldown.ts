import {
  BaseError,
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  type Address,
  type PublicClient,
} from 'viem';
import type { PermittedYieldToken } from './deployOptions';

/**
 * Ethena's sUSDe refuses ERC-4626 `withdraw`/`redeem` while `cooldownDuration()` is non-zero, so a vault over
 * it would take deposits it cannot pay back synchronously (the asynchronous ERC-7540 redemption is not built).
 * A token whose staked vault has a cooldown on is neither offered nor deployed; the vault contract itself
 * reports nothing withdrawable meanwhile (contracts/yield/YieldVault.sol, `cooldownActive`).
 */

const cooldownDurationAbi = [
  {
    type: 'function',
    name: 'cooldownDuration',
    stateMutability: 'view',
    inputs: [],
    outputs: [{ name: '', type: 'uint24' }],
  },
] as const;

/** Any client that can read a contract (the api's public clients, the worker's deployer clients). */
export type ChainReader = Pick<PublicClient, 'readContract'>;

export interface TokenInCooldown {
  symbol: string;
  stakedVault: Address;
  cooldownSec: number;
}

/**
 * The staked vault's cooldown in seconds. A vault without `cooldownDuration()` (a plain ERC-4626: the call
 * reverts or answers nothing) has none, as the vault contract judges it too; an RPC failure is thrown.
 */
export async function readCooldownDuration(client: ChainReader, stakedVault: Address): Promise<number> {
  try {
    const seconds = await client.readContract({
      address: stakedVault,
      abi: cooldownDurationAbi,
      functionName: 'cooldownDuration',
    });
    return Number(seconds);
  } catch (error) {
    const noSuchFunction =
      error instanceof BaseError &&
      error.walk(
        (cause) =>
          cause instanceof ContractFunctionRevertedError || cause instanceof ContractFunctionZeroDataError,
      );
    if (noSuchFunction) return 0;
    throw error;
  }
}

/** Those of `tokens` whose staked vault has a withdrawal cooldown on now. */
export async function tokensInCooldown(
  client: ChainReader,
  tokens: PermittedYieldToken[],
): Promise<TokenInCooldown[]> {
  const durations = await Promise.all(tokens.map((token) => readCooldownDuration(client, token.stakedVault)));
  return tokens.flatMap((token, index) =>
    durations[index]! > 0
      ? [{ symbol: token.symbol, stakedVault: token.stakedVault, cooldownSec: durations[index]! }]
      : [],
  );
}

/** `USDe (sUSDe cooldownDuration 604800 s)`, for messages and failure reasons. */
export function describeCooldowns(tokens: TokenInCooldown[]): string {
  return tokens.map((token) => `${token.symbol} (sUSDe cooldownDuration ${token.cooldownSec} s)`).join(', ');
}
