import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type UntrustedFields, labelUntrusted, untrustedNotice } from './untrustedData';

/**
 * What a tool answers (docs/decisions.md "Tool server (MCP) and session keys"): the route's JSON body as text and as structured content, or a
 * result with `isError: true` whose text starts with one of SPEC's tool-server prefixes (or, for any
 * other API failure, the API's status and message).
 */

export const TOOL_ERROR_PREFIXES = [
  'LOGIN_REQUIRED',
  'RE_AUTH_REQUIRED',
  'OTP_INVALID',
  'OTP_EXPIRED',
  'API_KEY_REQUIRED',
] as const;

export type ToolErrorPrefix = (typeof TOOL_ERROR_PREFIXES)[number];

/** A tool failure the caller can act on; `prefix` is SPEC's code, absent for other API errors. */
export class ToolFailure extends Error {
  override name = 'ToolFailure';
  constructor(
    message: string,
    readonly prefix?: ToolErrorPrefix,
  ) {
    super(message);
  }

  get text(): string {
    return this.prefix ? `${this.prefix}: ${this.message}` : this.message;
  }
}

export const loginRequired = () =>
  new ToolFailure(
    'not signed in; call login_start with your e-mail, then login_verify with the code',
    'LOGIN_REQUIRED',
  );

export const reAuthRequired = (why: string) =>
  new ToolFailure(`${why}; sign in again with login_start and login_verify`, 'RE_AUTH_REQUIRED');

export const apiKeyRequired = (why: string) =>
  new ToolFailure(
    `${why}; create one with create_api_key or set STABLEPAY_API_KEY to an sk_ key`,
    'API_KEY_REQUIRED',
  );

/**
 * The body as the tool's answer: JSON text, and the same object as structured content. With untrusted
 * fields (untrustedData.ts), their values are wrapped in both and a notice comes first.
 */
export function toolSuccess(body: unknown, untrusted: readonly UntrustedFields[] = []): CallToolResult {
  const labelled = untrusted.length > 0 ? labelUntrusted(body, untrusted) : body;
  const structured =
    labelled !== null && typeof labelled === 'object' && !Array.isArray(labelled)
      ? (labelled as Record<string, unknown>)
      : { data: labelled };
  const json = { type: 'text' as const, text: JSON.stringify(labelled, null, 2) };
  return {
    content: untrusted.length > 0 ? [{ type: 'text', text: untrustedNotice(untrusted) }, json] : [json],
    structuredContent: structured,
  };
}

export function toolError(failure: ToolFailure): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: failure.text }] };
}
