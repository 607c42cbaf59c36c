import {
  numberToHex,
  pad,
  parseAbiItem,
  toEventSelector,
  type Address,
  type Hex,
  type Log,
  type PublicClient,
} from 'viem';
import { isLogRangeRefusal } from './logRangeRefusal';

export const transferEvent = parseAbiItem(
  'event Transfer(address indexed from, address indexed to, uint256 value)',
);

export type TransferLog = Log<bigint, number, false, typeof transferEvent, true>;

const TRANSFER_TOPIC = toEventSelector(transferEvent);

interface RpcLog {
  address: Hex;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex | null;
  blockHash: Hex | null;
  transactionHash: Hex | null;
  transactionIndex: Hex | null;
  logIndex: Hex | null;
  removed?: boolean;
}

/**
 * A Transfer log decoded by hand: the event is fixed (two indexed addresses, one uint256), so the
 * topics and the data word are read directly; addresses come back lower-case. viem's getLogs decoding cost about 20× the request
 * itself here (docs/performance.md). Like viem's strict mode, a log of another shape (an ERC-721
 * Transfer has three indexed topics and no data) is skipped.
 */
function decodeTransferLog(log: RpcLog): TransferLog | undefined {
  if (log.topics.length !== 3 || log.topics[0]!.toLowerCase() !== TRANSFER_TOPIC || log.data.length !== 66)
    return undefined;
  // Lower-case, not checksummed (a keccak per address): the monitor compares addresses lower-cased.
  const from = `0x${log.topics[1]!.slice(26).toLowerCase()}` as Address;
  const to = `0x${log.topics[2]!.slice(26).toLowerCase()}` as Address;
  return {
    address: log.address,
    topics: log.topics as TransferLog['topics'],
    data: log.data,
    blockNumber: log.blockNumber === null ? null : BigInt(log.blockNumber),
    blockHash: log.blockHash,
    transactionHash: log.transactionHash,
    transactionIndex: log.transactionIndex === null ? null : Number(log.transactionIndex),
    logIndex: log.logIndex === null ? null : Number(log.logIndex),
    removed: log.removed ?? false,
    eventName: 'Transfer',
    args: { from, to, value: BigInt(log.data) },
  } as TransferLog;
}
export interface FetchDepositTransfersParameters {
  /** The supported stablecoins of the chain (the logs' emitters). */
  tokens: Address[];
  /**
   * The deposit addresses that can receive a payment now (the `to` topic filter), or `'any'`: every
   * Transfer of the tokens, for the caller to match (the unfiltered form, for a large watched set).
   */
  recipients: Address[] | 'any';
  fromBlock: bigint;
  toBlock: bigint;
  /** Most recipients in one request's `to` topic list. */
  recipientsPerRequest: number;
}

export interface DepositTransfers {
  /** Every Transfer of those tokens to those recipients (or to anyone) in the range, by block and log index. */
  logs: TransferLog[];
  /** eth_getLogs calls made. */
  requests: number;
  /** Size refusals met (each answered by splitting the range, or the recipients, in two). */
  refusals: number;
  /** The widest block span that succeeded once a refusal was met; undefined without refusals. */
  acceptedSpan?: bigint;
}

/**
 * The Transfers of the supported tokens over a block range, in one of two forms. Filtered: **into our
 * deposit addresses**, the `to` topic carrying the recipients (an OR list, chunked), so the cost follows
 * our watched addresses. Unfiltered (`recipients: 'any'`): every Transfer of those tokens, one request per
 * range, so the cost follows the chain's stablecoin traffic whatever the number of addresses we watch.
 * A provider that refuses the size of a request (too many blocks or results, see logRangeRefusal.ts)
 * gets the range split in halves, down to one block, then the recipient list split; any other error is
 * thrown for the caller's retry.
 */
export async function fetchDepositTransfers(
  client: PublicClient,
  { tokens, recipients, fromBlock, toBlock, recipientsPerRequest }: FetchDepositTransfersParameters,
): Promise<DepositTransfers> {
  const result: DepositTransfers = { logs: [], requests: 0, refusals: 0 };
  if (tokens.length === 0 || (recipients !== 'any' && recipients.length === 0) || toBlock < fromBlock)
    return result;

  /** `chunk` undefined: no `to` topic (the unfiltered form). */
  const fetchSpan = async (from: bigint, to: bigint, chunk?: Address[]): Promise<TransferLog[]> => {
    try {
      result.requests += 1;
      const raw = (await client.request({
        method: 'eth_getLogs',
        params: [
          {
            address: tokens,
            topics: chunk
              ? [TRANSFER_TOPIC, null, chunk.map((recipient) => pad(recipient.toLowerCase() as Hex))]
              : [TRANSFER_TOPIC],
            fromBlock: numberToHex(from),
            toBlock: numberToHex(to),
          },
        ],
      })) as RpcLog[];
      const logs = raw.flatMap((log) => decodeTransferLog(log) ?? []);
      if (result.refusals > 0) {
        const span = to - from + 1n;
        if (result.acceptedSpan === undefined || span > result.acceptedSpan) result.acceptedSpan = span;
      }
      return logs;
    } catch (error) {
      if (!isLogRangeRefusal(error)) throw error;
      result.refusals += 1;
      if (to > from) {
        const middle = from + (to - from) / 2n;
        return [...(await fetchSpan(from, middle, chunk)), ...(await fetchSpan(middle + 1n, to, chunk))];
      }
      if (chunk && chunk.length > 1) {
        const half = Math.ceil(chunk.length / 2);
        return [
          ...(await fetchSpan(from, to, chunk.slice(0, half))),
          ...(await fetchSpan(from, to, chunk.slice(half))),
        ];
      }
      throw error;
    }
  };

  if (recipients === 'any') result.logs.push(...(await fetchSpan(fromBlock, toBlock)));
  else {
    for (let start = 0; start < recipients.length; start += recipientsPerRequest) {
      result.logs.push(
        ...(await fetchSpan(fromBlock, toBlock, recipients.slice(start, start + recipientsPerRequest))),
      );
    }
  }
  // A node answers in block and log order, and an unfiltered range's halves are joined in order: only the
  // filtered form's answers (one per `to` list, or per half of a refused list) need sorting, and they hold
  // our logs only. The unfiltered form's tens of thousands are left as they came.
  if (recipients !== 'any') {
    result.logs.sort((a, b) =>
      a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1,
    );
  }
  return result;
}
