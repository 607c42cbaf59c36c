import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { html, trustedHtml, type SafeHtml } from './html';

/**
 * The `<head>` of the public pages that share the checkout page's look and CSP (the refund claim page, the
 * subscribe and manage pages): their stylesheets inline under the response's nonce, no external resource,
 * not indexed.
 */

/**
 * The checkout stylesheet, then the page's own (paths relative to web/), read once at start. A `</style`
 * inside would end the style element early, so it refuses to start with one.
 */
export function readPublicPageStylesheets(page: string, ...ownStylesheets: string[]): string {
  const css = [join('checkout', 'checkout.css'), ...ownStylesheets]
    .map((path) => readFileSync(join(__dirname, path), 'utf8'))
    .join('\n');
  if (/<\/style/i.test(css)) throw new Error(`the ${page} page’s stylesheets must not contain </style`);
  return css;
}

export function publicPageHead(title: string, nonce: string, css: string): SafeHtml {
  return html`<head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="robots" content="noindex" />
    <title>${title}</title>
    <link rel="icon" href="data:," />
    <style nonce="${nonce}">
      ${trustedHtml(css)}
    </style>
  </head>`;
}
