import { retryingFetch } from '../sdk/src/retryingFetch';

const retrying = retryingFetch(globalThis.fetch, {
  // Told on stderr: `npm run --silent token` keeps stdout to the token alone.
  onRetry: ({ status, delayMs, request }) =>
    process.stderr.write(
      `${request.method} ${new URL(request.url).pathname} answered ${status}: retrying in ${delayMs / 1000} s\n`,
    ),
});

/**
 * `fetch` for the dev tools (`npm run token`, `npm run pay`): the SDK's own retry of 429 and 503 after
 * their Retry-After (sdk/src/retryingFetch.ts), so a tool waits out a short rate limit instead of stopping.
 */
export function retryingDevFetch(url: string, init?: RequestInit): Promise<Response> {
  return retrying(new Request(url, init));
}
