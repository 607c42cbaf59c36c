import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';

/** The tool server's environment (docs/decisions.md "Tool server (MCP) and session keys"): where the API is, which sk_ key, where credentials live. */

export interface ToolServerConfig {
  apiUrl: string;
  apiKey?: string;
  credentialsFile: string;
  /** A deployments file (e.g. the dev stack's .dev/stack.json): chains' RPC URLs and contracts. */
  deploymentsFile?: string;
  /** STABLEPAY_RPC_URL_<chainId>, for create_session_key. */
  rpcUrls: Record<number, string>;
  logLevel: string;
}

const schema = z.object({
  STABLEPAY_API_URL: z.string().url().default('http://localhost:3000'),
  STABLEPAY_API_KEY: z.string().startsWith('sk_', 'must be an sk_ API key').optional(),
  STABLEPAY_CREDENTIALS_FILE: z.string().min(1).optional(),
  STABLEPAY_DEPLOYMENTS_FILE: z.string().min(1).optional(),
  STABLEPAY_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export class ToolServerConfigError extends Error {
  override name = 'ToolServerConfigError';
}

export function loadToolServerConfig(env: NodeJS.ProcessEnv): ToolServerConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    throw new ToolServerConfigError(
      `Invalid tool server configuration:\n${parsed.error.issues.map((issue) => `  ${String(issue.path[0])}: ${issue.message}`).join('\n')}`,
    );
  }
  const rpcUrls: Record<number, string> = {};
  for (const [name, value] of Object.entries(present)) {
    const match = /^STABLEPAY_RPC_URL_(\d+)$/.exec(name);
    if (!match || value === undefined) continue;
    if (!z.string().url().safeParse(value).success) throw new ToolServerConfigError(`${name}: must be a URL`);
    rpcUrls[Number(match[1])] = value;
  }
  const config = parsed.data;
  return {
    apiUrl: config.STABLEPAY_API_URL,
    apiKey: config.STABLEPAY_API_KEY,
    credentialsFile:
      config.STABLEPAY_CREDENTIALS_FILE ?? join(homedir(), '.config', 'stablepay', 'credentials.json'),
    deploymentsFile: config.STABLEPAY_DEPLOYMENTS_FILE,
    rpcUrls,
    logLevel: config.STABLEPAY_LOG_LEVEL,
  };
}
