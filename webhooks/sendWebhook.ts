import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { WebhookAttemptOutcome } from '../db/schema';
import { ipLiteralOf, isPublicAddress, withoutNonPublicAddresses } from './targetAddress';

/** How one attempt ended; only `succeeded` (a 2xx) counts as delivered. A 3xx is not followed. */
export type { WebhookAttemptOutcome };

export interface WebhookSendResult {
  outcome: WebhookAttemptOutcome;
  /** The receiver's HTTP status, when it answered. */
  statusCode: number | null;
  /** From the start of the request to the end of the (truncated) answer or the failure. */
  latencyMs: number;
  /** The first bytes of the answer (UTF-8), at most `responseBodyLimitBytes`. */
  responseBody: string | null;
  error: string | null;
}

export interface SendWebhookParameters {
  url: string;
  /** The exact body bytes that were signed. */
  rawBody: string;
  headers: Record<string, string>;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: when false, only public addresses are connected to. */
  allowPrivateTargets: boolean;
  /** The whole exchange (DNS, connect, TLS, answer) is aborted after this long. */
  timeoutMs: number;
  responseBodyLimitBytes: number;
  /** Aborts the request early (the activity's cancellation). */
  signal?: AbortSignal;
}

class BlockedAddressError extends Error {
  override name = 'BlockedAddressError';
}

class DeadlineError extends Error {
  override name = 'DeadlineError';
}

/**
 * Resolves like dns.lookup but hands the socket only public addresses, so the check applies to the
 * address actually connected to: a name that resolves to a private address at delivery time (DNS
 * rebinding included) is refused before any byte is sent.
 */
const publicOnlyLookup = ((
  hostname: string,
  options: LookupOptions,
  callback: (...args: unknown[]) => void,
) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error);
    const allowed = addresses.filter(({ address }) => isPublicAddress(address));
    if (allowed.length === 0) {
      return callback(
        // Which internal addresses it resolved to is our network's business, not the merchant's.
        new BlockedAddressError(`${hostname} resolves only to non-public addresses`),
      );
    }
    if (options.all) return callback(null, allowed);
    return callback(null, allowed[0]!.address, allowed[0]!.family);
  });
}) as LookupFunction;

/**
 * POSTs a signed webhook body once and reports how it went; never throws. No redirect is
 * followed, the answer is read only up to the limit, and the whole exchange has one deadline.
 */
export async function sendWebhook({
  url,
  rawBody,
  headers,
  allowPrivateTargets,
  timeoutMs,
  responseBodyLimitBytes,
  signal,
}: SendWebhookParameters): Promise<WebhookSendResult> {
  const startedAt = performance.now();
  const elapsed = () => Math.round(performance.now() - startedAt);
  const failed = (outcome: WebhookAttemptOutcome, error: string): WebhookSendResult => ({
    outcome,
    statusCode: null,
    latencyMs: elapsed(),
    responseBody: null,
    error,
  });

  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return failed('network_error', 'invalid URL');
  }
  const literal = ipLiteralOf(target.hostname);
  if (!allowPrivateTargets && literal !== undefined && !isPublicAddress(literal)) {
    return failed('blocked_address', `${literal} is not a public address`);
  }

  return new Promise<WebhookSendResult>((resolve) => {
    let settled = false;
    let timedOut = false;
    const finish = (result: WebhookSendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(target, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(rawBody)) },
      ...(allowPrivateTargets ? {} : { lookup: publicOnlyLookup }),
    });
    const deadline = setTimeout(() => {
      timedOut = true;
      request.destroy(new DeadlineError(`no complete answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const onAbort = () => request.destroy(new DeadlineError('attempt cancelled'));
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });

    request.on('error', (error) => {
      if (error instanceof BlockedAddressError) return finish(failed('blocked_address', error.message));
      if (error instanceof DeadlineError) return finish(failed('timeout', error.message));
      const code = (error as NodeJS.ErrnoException).code;
      // Connection errors quote the address connected to: a private one (allowed in development) stays ours.
      const detail = withoutNonPublicAddresses(error.message);
      finish(failed('network_error', code ? `${code}: ${detail}` : detail));
    });
    request.on('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      const answer = () => {
        // Headers in time but the body not: the receiver did not answer within the deadline.
        if (timedOut) return finish(failed('timeout', `no complete answer within ${timeoutMs} ms`));
        const statusCode = response.statusCode ?? 0;
        const succeeded = statusCode >= 200 && statusCode < 300;
        finish({
          outcome: succeeded ? 'succeeded' : 'http_error',
          statusCode,
          latencyMs: elapsed(),
          responseBody: Buffer.concat(chunks).toString('utf8'),
          error: succeeded
            ? null
            : statusCode >= 300 && statusCode < 400
              ? `redirect (${statusCode}) not followed`
              : `HTTP ${statusCode}`,
        });
      };
      response.on('data', (chunk: Buffer) => {
        const room = responseBodyLimitBytes - kept;
        if (room > 0) {
          chunks.push(chunk.subarray(0, room));
          kept += Math.min(room, chunk.length);
        }
        // Enough read: the rest of a large answer is not our concern.
        if (kept >= responseBodyLimitBytes) {
          answer();
          response.destroy();
        }
      });
      response.on('end', answer);
      response.on('error', () => answer());
    });
    request.end(rawBody);
  });
}
