import { createHash, randomBytes } from 'node:crypto';

/**
 * Confirmation tokens for clients without MCP elicitation: the first call of a guarded tool answers a
 * token and what it would do; a second call with that token performs it. A token is short-lived,
 * single-use (any presentation spends it) and bound to the tool and its exact arguments. Only hashes
 * are kept, in this process's memory.
 */
export interface ConfirmationTokens {
  issue(tool: string, args: Record<string, unknown>): { token: string; expiresAt: Date };
  /** True once: for the tool and exactly the arguments the token was issued for, before it expired. */
  redeem(token: string, tool: string, args: Record<string, unknown>): boolean;
}

export const CONFIRMATION_TOKEN_TTL_MS = 5 * 60 * 1000;
/** Most tokens pending at once; issuing more forgets the oldest. */
const MAX_PENDING = 100;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** JSON with object keys sorted, so equal arguments give equal text whatever their order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, inner]) => inner !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonicalJson(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const bindingOf = (tool: string, args: Record<string, unknown>) => sha256(`${tool}\n${canonicalJson(args)}`);

export function createConfirmationTokens({
  now,
  ttlMs = CONFIRMATION_TOKEN_TTL_MS,
}: {
  now: () => Date;
  ttlMs?: number;
}): ConfirmationTokens {
  const pending = new Map<string, { binding: string; expiresAt: number }>();
  return {
    issue(tool, args) {
      const at = now().getTime();
      for (const [key, { expiresAt }] of pending) if (expiresAt <= at) pending.delete(key);
      while (pending.size >= MAX_PENDING) pending.delete(pending.keys().next().value!);
      const token = `cfm_${randomBytes(24).toString('base64url')}`;
      const expiresAt = at + ttlMs;
      pending.set(sha256(token), { binding: bindingOf(tool, args), expiresAt });
      return { token, expiresAt: new Date(expiresAt) };
    },
    redeem(token, tool, args) {
      const key = sha256(token);
      const entry = pending.get(key);
      pending.delete(key);
      return (
        entry !== undefined && entry.expiresAt > now().getTime() && entry.binding === bindingOf(tool, args)
      );
    },
  };
}
