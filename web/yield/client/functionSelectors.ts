import type { Hex } from 'viem';
import type { ERC20_ABI, VAULT_ABI } from './vaultAbi';

/** The name of every function the site calls (vaultAbi.ts). */
export type SiteFunctionName = (typeof ERC20_ABI | typeof VAULT_ABI)[number]['name'];

/** Put in by Vite's `define` when dashboard/buildPageScripts.ts bundles the page. */
declare const __FUNCTION_SELECTORS__: Record<SiteFunctionName, Hex>;

/**
 * Each function's 4-byte selector, by name: viem's toFunctionSelector computes them from vaultAbi.ts at
 * build time, so the page carries no keccak. web/yield/client/vaultAbi.test.ts finds each compiled
 * contract's selector in the bundle.
 */
export const FUNCTION_SELECTORS = __FUNCTION_SELECTORS__;
