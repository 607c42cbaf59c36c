import type { Address } from 'viem';
import {
  ENTRY_POINT_V07_ADDRESS,
  ENTRY_POINT_V08_ADDRESS,
  type EntryPointVersion,
} from '../../chain/entryPoints';

/** The EntryPoint releases the managed paymaster serves, at their canonical addresses. */
const SUPPORTED: Record<string, { address: Address; version: EntryPointVersion }> = {
  [ENTRY_POINT_V08_ADDRESS.toLowerCase()]: { address: ENTRY_POINT_V08_ADDRESS, version: '0.8' },
  [ENTRY_POINT_V07_ADDRESS.toLowerCase()]: { address: ENTRY_POINT_V07_ADDRESS, version: '0.7' },
};

/** The supported EntryPoint at `address` (any case), or undefined. */
export function supportedEntryPoint(
  address: string,
): { address: Address; version: EntryPointVersion } | undefined {
  return SUPPORTED[address.toLowerCase()];
}
