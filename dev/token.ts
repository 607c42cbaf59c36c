import { parseArgs } from 'node:util';
import type { Hex } from 'viem';
import { requireStackFile } from './stackFile';
import { signInWithWallet } from './walletLogin';

/**
 * `npm run token [-- --private-key 0x…]`: prints a fresh merchant JWT (one line, nothing else, so
 * `TOKEN=$(npm run --silent token)` works) for the stack's dev account, or for another wallet's key
 * (signing in creates that merchant the first time). It signs in through the real SIWE routes.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'private-key': { type: 'string' } } });
  const stack = requireStackFile();
  const privateKey = (values['private-key'] ?? stack.devAccount.privateKey) as Hex;
  if (!/^0x[0-9a-fA-F]{64}$/.test(privateKey)) throw new Error('--private-key must be 0x and 64 hex digits');
  const { token } = await signInWithWallet(stack.apiUrl, privateKey);
  process.stdout.write(`${token}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`token: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
