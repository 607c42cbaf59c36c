import type { Context } from 'koa';

/**
 * Headers of our HTML pages (checkout, yield sites): inline style and script only with this response's
 * nonce; fetch only to us; no other origin at all, so the page makes no external request.
 */
export function setStrictPageHeaders(ctx: Context, nonce: string): void {
  ctx.set({
    'Content-Security-Policy': [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src 'nonce-${nonce}'`,
      "img-src 'self' data:",
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
  });
}
