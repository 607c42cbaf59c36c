import type { Hex } from 'viem';
import { sendWithNextNonce } from '../../activities/lockedSends';
import { createNetworkRegistry } from '../../chain/networkRegistry';
import { createOperatorChains } from '../../chain/operatorChains';
import { loadConfig } from '../../config';
import { createDb } from '../../db/client';

/**
 * A sender process of its own, for the test that two processes sharing one key never take the same
 * nonce: at `SEND_AT` (epoch ms, so every process starts together) it sends `SEND_COUNT` transactions
 * at once with `OPERATOR_PRIVATE_KEY` on `SEND_CHAIN_ID` through sendWithNextNonce, as the worker's
 * settlement steps do, and prints one JSON line: the hashes, and the error of every send that failed.
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const db = createDb({ connectionString: process.env.DATABASE_URL!, maxConnections: 5 });
  const operator = createOperatorChains({
    networks: createNetworkRegistry(config),
    operatorPrivateKey: process.env.OPERATOR_PRIVATE_KEY as Hex,
  });
  const client = operator.client(Number(process.env.SEND_CHAIN_ID));
  const count = Number(process.env.SEND_COUNT);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(process.env.SEND_AT) - Date.now())));
  const outcomes = await Promise.allSettled(
    Array.from({ length: count }, () =>
      // A self-transfer of nothing: the cheapest transaction that still spends a nonce.
      sendWithNextNonce(db, client, { to: operator.address, data: '0x' }),
    ),
  );
  process.stdout.write(
    `${JSON.stringify({
      hashes: outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : [])),
      errors: outcomes.flatMap((outcome) =>
        outcome.status === 'rejected' ? [String((outcome.reason as Error).message ?? outcome.reason)] : [],
      ),
    })}\n`,
  );
  await db.destroy();
}

main().catch((error) => {
  process.stderr.write(`${String(error?.stack ?? error)}\n`);
  process.exit(1);
});
