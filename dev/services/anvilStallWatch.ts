/**
 * A watch on one automining anvil: when ready transactions wait in its pool and no block comes, it mines one.
 *
 * Why: anvil's automine can leave a ready transaction out of its blocks when same-sender transactions arrive
 * out of nonce order (foundry-rs/foundry#10122); with nothing more sent, no block comes and every receipt wait
 * on it runs to its timeout (seen in loaded CI runs: fixtures waiting 180 s). An empty block takes such a
 * straggler in. Watching the chain instead of each client covers every waiter at once: the tests' clients,
 * the deployer's and the worker's.
 *
 * The same out-of-order arrival can also leave a sender's transactions queued although their nonce gap is
 * filled: the pool never promotes them, and no block takes them in (reproduced with anvil_setNonce; seen in a
 * loaded CI run as a deployment that never finished). For such a sender the watch takes its transactions out
 * of the pool and sends them again, raw and in nonce order: same hashes, so every waiter still gets its
 * receipt. A queued transaction behind a real gap (a nonce nobody sent) is only reported.
 *
 * It stays out of the way of tests that turn automine off to hold a transaction in the pool, and it never
 * mines while the pool is empty. When it sees something held it writes one line saying what (once per pool
 * state), so a stall of another kind (a nonce gap, which no block cures) leaves its evidence in the run's log.
 */

/** Between two looks at the pool: a ready transaction held across two looks has waited at least this long. */
export const STALL_WATCH_INTERVAL_MS = 2_000;

export interface AnvilStallWatch {
  stop(): void;
  /** Blocks this watch has mined to take held transactions in. */
  readonly nudges: number;
  /** Transactions this watch has sent again because the pool kept them queued with no nonce gap. */
  readonly resent: number;
}

export function watchAnvilForStalls(
  rpcUrl: string,
  {
    intervalMs = STALL_WATCH_INTERVAL_MS,
    report = (line: string) => process.stderr.write(`${line}\n`),
  }: { intervalMs?: number; report?: (line: string) => void } = {},
): AnvilStallWatch {
  /** The block number at the last look, when that look saw transactions in the pool with automine on. */
  let seenWaitingAt: string | undefined;
  let nudges = 0;
  let resent = 0;
  let stopped = false;
  let looking = false;
  let lastReport = '';

  const look = async () => {
    if (looking) return;
    looking = true;
    try {
      const [automine, status, blockNumber] = await Promise.all([
        rpc<boolean>(rpcUrl, 'anvil_getAutomine'),
        rpc<{ pending: string; queued: string }>(rpcUrl, 'txpool_status'),
        rpc<string>(rpcUrl, 'eth_blockNumber'),
      ]);
      const pending = Number(status.pending);
      const waiting = automine && pending + Number(status.queued) > 0;
      const held = waiting && seenWaitingAt === blockNumber;
      seenWaitingAt = waiting ? blockNumber : undefined;
      if (!held || stopped) return;
      const content = await rpc<PoolContent>(rpcUrl, 'txpool_content');
      const stuck = await sendersQueuedWithoutGap(rpcUrl, content);
      const mine = pending > 0;
      const remedies = [
        ...(stuck.length > 0
          ? [
              `sent ${stuck.map(({ sender, nonces }) => `${sender}'s nonces ${nonces.join(', ')}`).join('; ')} again, queued with no gap`,
            ]
          : []),
        ...(mine ? ['mined one to take the ready ones in'] : []),
      ];
      const line = `[anvil ${rpcUrl}] no block for ${intervalMs} ms with ${describePool(content)}${
        remedies.length > 0 ? `: ${remedies.join('; ')} (foundry-rs/foundry#10122)` : ''
      }`;
      if (line !== lastReport) report(line);
      lastReport = line;
      for (const { sender, transactions } of stuck)
        resent += await sendAgainInNonceOrder(rpcUrl, sender, transactions);
      if (mine) {
        await rpc(rpcUrl, 'evm_mine');
        nudges++;
      }
      if (mine || stuck.length > 0) seenWaitingAt = undefined;
    } catch {
      // The chain is stopping or busy; the next look decides.
    } finally {
      looking = false;
    }
  };

  const timer = setInterval(() => void look(), intervalMs);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
    get nudges() {
      return nudges;
    },
    get resent() {
      return resent;
    },
  };
}

/** anvil's txpool_content: transactions by sender and nonce, ready ones under `pending`. */
type PoolContent = Record<'pending' | 'queued', Record<string, Record<string, { hash: Hex }>> | undefined>;
type Hex = `0x${string}`;

interface StuckSender {
  sender: string;
  nonces: number[];
  /** Every pool transaction of the sender, ready and queued, by nonce. */
  transactions: { nonce: number; hash: Hex }[];
}

/**
 * Senders whose lowest queued nonce is the next one their account expects (on chain, or right after their
 * ready transactions): the pool should have made it ready and did not.
 */
async function sendersQueuedWithoutGap(rpcUrl: string, content: PoolContent): Promise<StuckSender[]> {
  const stuck: StuckSender[] = [];
  for (const [sender, queuedByNonce] of Object.entries(content.queued ?? {})) {
    const readyByNonce = content.pending?.[sender] ?? {};
    const queued = Object.keys(queuedByNonce).map(Number);
    const accountNonce = Number(await rpc<string>(rpcUrl, 'eth_getTransactionCount', [sender, 'latest']));
    const readyNonces = Object.keys(readyByNonce).map(Number);
    const expected = readyNonces.length > 0 ? Math.max(...readyNonces) + 1 : accountNonce;
    if (Math.min(...queued) !== expected) continue;
    const transactions = Object.entries({ ...readyByNonce, ...queuedByNonce })
      .map(([nonce, { hash }]) => ({ nonce: Number(nonce), hash }))
      .sort((a, b) => a.nonce - b.nonce);
    stuck.push({ sender, nonces: queued.sort((a, b) => a - b), transactions });
  }
  return stuck;
}

/** Takes the sender's transactions out of the pool and sends the same signed bytes again, lowest nonce first. */
async function sendAgainInNonceOrder(
  rpcUrl: string,
  sender: string,
  transactions: StuckSender['transactions'],
): Promise<number> {
  const raws: Hex[] = [];
  for (const { hash } of transactions)
    raws.push(await rpc<Hex>(rpcUrl, 'eth_getRawTransactionByHash', [hash]));
  await rpc(rpcUrl, 'anvil_removePoolTransactions', [sender]);
  let sent = 0;
  for (const raw of raws) {
    // One refused (mined meanwhile, say) must not keep the later nonces out.
    await rpc(rpcUrl, 'eth_sendRawTransaction', [raw]).then(
      () => sent++,
      () => undefined,
    );
  }
  return sent;
}

/** "2 ready (0xf39f…: nonces 7, 8), 1 queued (0x7099…: nonce 12)" from anvil's txpool_content. */
function describePool(content: PoolContent): string {
  const part = (name: string, bySender: Record<string, Record<string, unknown>> = {}) => {
    const senders = Object.entries(bySender).map(
      ([sender, byNonce]) => `${sender}: nonces ${Object.keys(byNonce).join(', ')}`,
    );
    const count = Object.values(bySender).reduce((sum, byNonce) => sum + Object.keys(byNonce).length, 0);
    return `${count} ${name}${senders.length > 0 ? ` (${senders.join('; ')})` : ''}`;
  };
  return `${part('ready', content.pending)}, ${part('queued', content.queued)}`;
}

async function rpc<T>(rpcUrl: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(5_000),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}
