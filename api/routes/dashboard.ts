import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Middleware } from 'koa';
import { escapeHtml } from '../../web/html';
import { setStrictPageHeaders } from '../../web/strictPageHeaders';

/**
 * | GET | /dashboard, /dashboard/* | none | 200 text/html the merchant dashboard's shell (client routes) |
 * | GET | /dashboard/assets/{file} | none | 200 the bundle's script and stylesheet, cached for good (hashed names) |
 *
 * The dashboard (dashboard/, built by dashboard/build.ts) is a client of the public JWT routes; this
 * only hands out its files, under the checkout page's strict CSP: the shell loads one script and one
 * stylesheet, each carrying this response's nonce. Served beside the router, not as a contract route:
 * it has no JSON, no auth and no place in /openapi.json.
 */

/** Where the bundle is: `dashboard/dist/` from a checkout, `dist/dashboard/dist/` in the image. */
const BUNDLE = join(__dirname, '..', '..', 'dashboard', 'dist');
const ENTRY = 'src/main.tsx';
const ASSET_NAME = /^[A-Za-z0-9_.-]+\.(js|css|svg|woff2)$/;
const CONTENT_TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  woff2: 'font/woff2',
};

interface BundleEntry {
  script: string;
  styles: string[];
}

async function readBundleEntry(folder: string): Promise<BundleEntry | undefined> {
  try {
    const manifest = JSON.parse(await readFile(join(folder, '.vite', 'manifest.json'), 'utf8'));
    const entry = manifest[ENTRY] as { file: string; css?: string[] } | undefined;
    return entry ? { script: entry.file, styles: entry.css ?? [] } : undefined;
  } catch {
    return undefined;
  }
}

function renderShell(entry: BundleEntry, nonce: string): string {
  const attr = escapeHtml(nonce);
  const styles = entry.styles
    .map((file) => `<link rel="stylesheet" href="/dashboard/${escapeHtml(file)}" nonce="${attr}">`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>StablePay dashboard</title><link rel="icon" href="data:,">${styles}<script type="module" src="/dashboard/${escapeHtml(entry.script)}" nonce="${attr}"></script></head><body><div id="app"></div><noscript>The dashboard needs JavaScript.</noscript></body></html>`;
}

export function dashboardPages({ folder = BUNDLE }: { folder?: string } = {}): Middleware {
  // Read once: the bundle does not change under a running api (a rebuild restarts it).
  let entry: Promise<BundleEntry | undefined> | undefined;
  return async (ctx, next) => {
    const path = ctx.path;
    if (path !== '/dashboard' && !path.startsWith('/dashboard/')) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const asset = /^\/dashboard\/assets\/([^/]+)$/.exec(path)?.[1];
    if (asset !== undefined) return serveAsset(ctx, folder, asset);
    entry ??= readBundleEntry(folder);
    const built = await entry;
    if (!built) entry = undefined;
    const nonce = randomBytes(16).toString('base64');
    setStrictPageHeaders(ctx, nonce);
    ctx.type = 'html';
    ctx.status = built ? 200 : 503;
    ctx.body = built
      ? renderShell(built, nonce)
      : '<!doctype html><title>Dashboard not built</title><p>The dashboard is not built: run npm run build.</p>';
  };
}

async function serveAsset(ctx: Parameters<Middleware>[0], folder: string, name: string): Promise<void> {
  const kind = ASSET_NAME.exec(name)?.[1];
  const body = kind ? await readFile(join(folder, 'assets', name)).catch(() => undefined) : undefined;
  ctx.set('X-Content-Type-Options', 'nosniff');
  if (!body || !kind) {
    ctx.status = 404;
    ctx.type = 'text/plain';
    ctx.body = 'Not found';
    return;
  }
  ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
  ctx.type = CONTENT_TYPES[kind]!;
  ctx.body = body;
}
