import { custom, http, type Chain, type Transport } from 'viem';

/** Unchanged block-number polls (at the deployer's 200 ms polling) before the chain is nudged: about 3 s. */
const STALLED_POLLS = 15;

/**
 * The local deployer's transport: plain HTTP, except that while a caller waits on a block number that
 * does not move, it mines a block (`evm_mine`) every few seconds.
 *
 * Why: one deployment wave sends its transactions concurrently with consecutive nonces, and anvil's
 * automine can leave a ready transaction out of its blocks when same-sender transactions arrive out of
 * nonce order (foundry-rs/foundry#10122); with nothing more sent, no block comes and its receipt never
 * does (seen once in a loaded CI run: a fixture's deployment waited 180 s). An empty block takes such a
 * straggler in; with none pending it is harmless.
 */
export function nudgingTransport(rpcUrl: string, chain: Chain): Transport {
  const plain = http(rpcUrl)({ chain });
  let lastBlock: unknown;
  let unchangedPolls = 0;
  return custom({
    async request({ method, params }: { method: string; params?: unknown }) {
      const result = await plain.request({ method, params } as never);
      if (method !== 'eth_blockNumber') return result;
      if (result !== lastBlock) {
        lastBlock = result;
        unchangedPolls = 0;
      } else if (++unchangedPolls >= STALLED_POLLS) {
        unchangedPolls = 0;
        await plain.request({ method: 'evm_mine', params: [] } as never);
      }
      return result;
    },
  });
}
