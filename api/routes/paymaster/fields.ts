import { isAddress } from 'viem';
import { z } from 'zod';
import { NETWORKS } from '../../../config/networks';

/** Request fields the paymaster management routes share. */

const SUPPORTED_CHAIN_IDS = NETWORKS.map((network) => network.chainId);

/** A chain id the paymaster supports: Ethereum, Base, Arbitrum and their Sepolia testnets. */
export const supportedChainId = z
  .number()
  .int()
  .refine(
    (chainId) => SUPPORTED_CHAIN_IDS.includes(chainId),
    `must be a supported chain id (${SUPPORTED_CHAIN_IDS.join(', ')})`,
  );

/** Any-case 0x address; stored lower-case, answered checksummed. */
export const evmAddress = z
  .string()
  .refine((value) => isAddress(value, { strict: false }), 'must be a 0x address')
  .transform((value) => value.toLowerCase());

export const optionalLabel = z.string().trim().min(1, 'must not be empty').max(100).optional();

export const idParams = z.object({ id: z.string().uuid() });
