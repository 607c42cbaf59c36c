import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { ApiAuth, ApiClient, ApiRequest } from './apiClient';
import type { CredentialsStore } from './credentials';
import { CONFIRMATION_TOKEN_FIELD, confirmationTokenInput, type ConfirmAction } from './personConfirmation';
import type { SessionKeyChains } from './sessionKeys/sessionKeyChains';
import type { UntrustedFields } from './untrustedData';

/** What every tool may use. */
export interface ToolContext {
  api: ApiClient;
  credentials: CredentialsStore;
  /** RPC clients and framework addresses of the chains session keys are made on. */
  chains: SessionKeyChains;
  logger: Logger;
  now: () => Date;
  /** The person's confirmation of an action the agent alone may not take (personConfirmation.ts). */
  confirm: ConfirmAction;
}

/** A tool: its fixed name, the zod shape the SDK publishes as JSON Schema, and what it does. */
export interface ToolDefinition<Shape extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  description: string;
  inputSchema: Shape;
  annotations?: ToolAnnotations;
  /** Values of the answer written outside the merchant: labelled as untrusted data (untrustedData.ts). */
  untrusted?: readonly UntrustedFields[];
  /** Answers the body the tool returns; throws ToolFailure for what the caller must act on. */
  run(input: z.infer<z.ZodObject<Shape>>, context: ToolContext): Promise<unknown>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyToolDefinition = ToolDefinition<any>;

export function defineTool<Shape extends z.ZodRawShape>(tool: ToolDefinition<Shape>): AnyToolDefinition {
  return tool;
}

type Input<Shape extends z.ZodRawShape> = z.infer<z.ZodObject<Shape>>;

/**
 * A tool that is one route: the request is built from the input, the answer is the route's body (an
 * empty answer becomes `emptyResult`, e.g. `{ id, deleted: true }` for a 204). With `confirmation`, the
 * call first waits for the person's confirmation (personConfirmation.ts) of the action it describes;
 * it describes none (undefined) when this call's input changes nothing that needs one.
 */
export function routeTool<Shape extends z.ZodRawShape>({
  name,
  description,
  inputSchema,
  auth,
  method,
  path,
  query,
  headers,
  body,
  emptyResult,
  annotations,
  untrusted,
  confirmation,
}: {
  name: string;
  description: string;
  inputSchema: Shape;
  auth: ApiAuth;
  method: ApiRequest['method'];
  path: string | ((input: Input<Shape>) => string);
  query?: (input: Input<Shape>) => ApiRequest['query'];
  headers?: (input: Input<Shape>) => ApiRequest['headers'];
  body?: (input: Input<Shape>) => unknown;
  emptyResult?: (input: Input<Shape>) => unknown;
  annotations?: ToolAnnotations;
  untrusted?: readonly UntrustedFields[];
  confirmation?: (input: Input<Shape>, context: ToolContext) => Promise<string | undefined>;
}): AnyToolDefinition {
  return defineTool({
    name,
    description,
    inputSchema: confirmation
      ? { ...inputSchema, [CONFIRMATION_TOKEN_FIELD]: confirmationTokenInput }
      : inputSchema,
    ...(untrusted && { untrusted }),
    annotations: { readOnlyHint: method === 'GET', openWorldHint: false, ...annotations },
    async run(input: Input<Shape> & { [CONFIRMATION_TOKEN_FIELD]?: string }, context) {
      // The token is the confirmation's business, never part of the request.
      const { [CONFIRMATION_TOKEN_FIELD]: _token, ...rest } = input;
      const request = rest as Input<Shape>;
      const action = await confirmation?.(request, context);
      if (action !== undefined) {
        const confirmed = await context.confirm({ tool: name, input, action });
        if (!confirmed.confirmed) return confirmed.pending;
      }
      const response = await context.api.call({
        method,
        auth,
        path: typeof path === 'string' ? path : path(request),
        query: query?.(request),
        headers: headers?.(request),
        body: body?.(request),
      });
      return response.body === undefined && emptyResult ? emptyResult(request) : response.body;
    },
  });
}

/** A path segment from a tool input (ids are sent as given, but never able to change the path). */
export const segment = (value: string) => encodeURIComponent(value);

/** Drops `keys` from `input`: the rest is a route's body. */
export function without<T extends Record<string, unknown>, K extends keyof T>(
  input: T,
  ...keys: K[]
): Omit<T, K> {
  const copy = { ...input };
  for (const key of keys) delete copy[key];
  return copy;
}
