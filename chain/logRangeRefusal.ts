import { BaseError } from 'viem';

/**
 * Whether an `eth_getLogs` failure is a provider refusing the *size* of the request — too many blocks
 * or too many results — which a smaller range fixes, as opposed to an outage, which only a retry fixes.
 * The texts are the providers' own (public error documentation and observed answers):
 *
 * - Alchemy: "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range
 *   and no limit on the response size, or … a cap of 10K logs in the response. Based on your parameters,
 *   this block range should work: [0x…, 0x…]"
 * - Infura, geth: "query returned more than 10000 results" (code -32005)
 * - QuickNode: "eth_getLogs and eth_newFilter are limited to a 10,000 blocks range"
 * - Ankr: "block range is too wide"; BNB-style nodes: "exceed maximum block range: 5000"
 * - Cloudflare, public nodes: "block range too large", "range too large", "too many logs"
 * - viem itself: "HTTP response body exceeded the size limit" (ResponseBodyTooLargeError, its 10 MiB cap on an
 *   answer, about 25,000 Transfer logs): an unfiltered range resumed after a worker restart on a chain of
 *   400 logs a block (the workerIdle bench, 2026-11-29) met it and retried the same growing range forever
 */
const REFUSAL_TEXTS = [
  /log response size exceeded/i,
  /query returned more than \d+ results/i,
  /limited to a [\d,]+ (?:blocks? )?range/i,
  /block range (?:is )?too (?:large|wide|big)/i,
  /range too (?:large|wide|big)/i,
  /exceeds? (?:the )?max(?:imum)? (?:block )?range/i,
  /too many (?:logs|results|blocks)/i,
  /response size (?:should not|exceeds?|is larger)/i,
  /this block range should work/i,
  /response body exceeded the size limit/i,
];

/** JSON-RPC "limit exceeded" (EIP-1474), which Infura and geth use for oversized log queries. */
const LIMIT_EXCEEDED_CODE = -32005;

function messagesOf(error: unknown): { texts: string[]; codes: number[] } {
  const texts: string[] = [];
  const codes: number[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 8; depth += 1) {
    if (current instanceof BaseError) texts.push(current.shortMessage, current.details ?? '');
    if (current instanceof Error) texts.push(current.message);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'number') codes.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  return { texts, codes };
}

export function isLogRangeRefusal(error: unknown): boolean {
  const { texts, codes } = messagesOf(error);
  return (
    codes.includes(LIMIT_EXCEEDED_CODE) ||
    texts.some((text) => REFUSAL_TEXTS.some((pattern) => pattern.test(text)))
  );
}
