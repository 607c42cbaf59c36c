import type { Middleware } from 'koa';
import { badRequest, payloadTooLarge } from '../httpErrors';

/**
 * Reads the request body as raw bytes (kept on ctx.state.rawBody) and parses JSON.
 * Larger than `limitBytes` → 413 without buffering the rest; invalid JSON → 400.
 * The paymaster RPC turns parse failures into JSON-RPC -32700 itself, so it reads `rawBody`.
 */
export function jsonBody({
  limitBytes,
  jsonRpcPaths = [],
}: {
  limitBytes: number;
  /** Paths whose handlers answer a parse failure themselves (JSON-RPC -32700 instead of HTTP 400). */
  jsonRpcPaths?: string[];
}): Middleware {
  return async (ctx, next) => {
    if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method)) return next();
    const declared = Number(ctx.get('content-length') || 0);
    if (declared > limitBytes) throw payloadTooLarge(limitBytes);
    const raw = await readLimited(ctx.req, limitBytes);
    ctx.state.rawBody = raw;
    if (raw.length > 0 && ctx.is('application/json', '+json', 'text/plain') !== false) {
      try {
        ctx.state.body = JSON.parse(raw.toString('utf8'));
        ctx.state.jsonParseFailed = false;
      } catch {
        ctx.state.jsonParseFailed = true;
        if (!jsonRpcPaths.includes(ctx.path)) throw badRequest('Malformed JSON in request body');
      }
    }
    return next();
  };
}

async function readLimited(stream: NodeJS.ReadableStream, limitBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buffer.length;
    if (size > limitBytes) throw payloadTooLarge(limitBytes);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}
