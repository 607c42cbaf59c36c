import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A JSON-RPC proxy in front of a node that enforces what hosted providers enforce on `eth_getLogs`
 * (Alchemy: at most 2,000 blocks per request; Infura: at most 10,000 results), answering with the
 * providers' own error texts and codes, and counts what it served. Everything else passes through.
 */
export interface CappedRpcProxy {
  url: string;
  /** eth_getLogs requests received (of them without a `to` topic: unfiltered), refused, and logs returned. */
  stats: {
    getLogsRequests: number;
    unfilteredRequests: number;
    refusals: number;
    logsReturned: number;
    /** eth_blockNumber requests (the monitor's head polls). */
    headRequests: number;
  };
  setCaps(caps: { maxBlocks: number; maxLogs: number }): void;
  /**
   * Holds every eth_getLogs whose range covers `block` until released: `reached` resolves when the first
   * one arrives (a scan is then in the middle of that range).
   */
  holdRangeCovering(block: bigint): { reached: Promise<void>; release(): void };
  /** Holds the first eth_getLogs whose range reaches `block` or beyond (until released). */
  holdRangeReaching(block: bigint): { reached: Promise<void>; release(): void };
  close(): Promise<void>;
}

interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: number | string | null;
  method: string;
  params?: unknown[];
}

export async function startCappedRpcProxy(
  upstream: string,
  initial: { maxBlocks: number; maxLogs: number },
): Promise<CappedRpcProxy> {
  let caps = { ...initial };
  const stats = { getLogsRequests: 0, unfilteredRequests: 0, refusals: 0, logsReturned: 0, headRequests: 0 };
  let hold:
    { holds(from: bigint, to: bigint): boolean; arrived(): void; released: Promise<void> } | undefined;

  const forward = async (request: JsonRpcRequest) => {
    const response = await fetch(upstream, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request),
    });
    return (await response.json()) as { result?: unknown; error?: unknown };
  };

  const holdFirst = (holds: (from: bigint, to: bigint) => boolean) => {
    let arrived!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    hold = { holds, arrived, released };
    return {
      reached,
      release: () => {
        hold = undefined;
        release();
      },
    };
  };

  const handle = async (request: JsonRpcRequest) => {
    if (request.method === 'eth_blockNumber') stats.headRequests += 1;
    if (request.method !== 'eth_getLogs') return forward(request);
    stats.getLogsRequests += 1;
    const filter = (request.params?.[0] ?? {}) as {
      fromBlock?: string;
      toBlock?: string;
      topics?: unknown[];
    };
    if (!filter.topics?.[2]) stats.unfilteredRequests += 1;
    const from = BigInt(filter.fromBlock ?? '0x0');
    const to = BigInt(filter.toBlock ?? filter.fromBlock ?? '0x0');
    if (hold?.holds(from, to)) {
      hold.arrived();
      await hold.released;
    }
    if (to - from + 1n > BigInt(caps.maxBlocks)) {
      stats.refusals += 1;
      const suggestion = `[0x${from.toString(16)}, 0x${(from + BigInt(caps.maxBlocks) - 1n).toString(16)}]`;
      return {
        jsonrpc: '2.0',
        id: request.id,
        error: {
          code: -32602,
          message: `Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: ${suggestion}`,
        },
      };
    }
    const answer = await forward(request);
    if (Array.isArray(answer.result) && answer.result.length > caps.maxLogs) {
      stats.refusals += 1;
      return {
        jsonrpc: '2.0',
        id: request.id,
        error: { code: -32005, message: `query returned more than ${caps.maxLogs} results` },
      };
    }
    if (Array.isArray(answer.result)) stats.logsReturned += answer.result.length;
    return answer;
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as JsonRpcRequest | JsonRpcRequest[];
        const answer = Array.isArray(body) ? await Promise.all(body.map(handle)) : await handle(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      } catch (error) {
        res.writeHead(502).end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stats,
    setCaps(next) {
      caps = { ...next };
    },
    holdRangeCovering(block) {
      return holdFirst((from, to) => from <= block && block <= to);
    },
    holdRangeReaching(block) {
      return holdFirst((_from, to) => to >= block);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
