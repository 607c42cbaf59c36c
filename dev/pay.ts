import { parseArgs } from 'node:util';
import { formatUnits, type Hex } from 'viem';
import { paySession } from './paySession';
import { requireStackFile } from './stackFile';

/**
 * `npm run pay -- <sessionId> [--symbol USDC] [--chain <chainId>]`: pays a session from the stack's dev
 * account (mint then transfer of the option's exact amount to its deposit address), then says how to
 * watch its status. `--private-key 0x…` pays from another funded wallet.
 */
async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      symbol: { type: 'string', default: 'USDC' },
      chain: { type: 'string' },
      'private-key': { type: 'string' },
    },
  });
  const [sessionId] = positionals;
  if (!sessionId || positionals.length > 1)
    throw new Error('usage: npm run pay -- <sessionId> [--symbol USDC|USDT|USDe] [--chain <chainId>]');
  if (values.chain !== undefined && !/^\d+$/.test(values.chain))
    throw new Error('--chain must be a chain id');
  const stack = requireStackFile();
  const { option, txHash } = await paySession({
    apiUrl: stack.apiUrl,
    chains: stack.chains,
    privateKey: (values['private-key'] ?? stack.devAccount.privateKey) as Hex,
    sessionId,
    symbol: values.symbol,
    chainId: values.chain === undefined ? undefined : Number(values.chain),
  });
  process.stdout.write(
    [
      `paid ${formatUnits(BigInt(option.amount), option.decimals)} ${option.symbol} on ${option.network} (chain ${option.chainId}) to ${option.depositAddress}`,
      `transaction ${txHash}`,
      `watch it: curl -s ${stack.apiUrl}/v1/sessions/${sessionId}/status`,
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`pay: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
