import { Client, Connection, type WorkflowClientInterceptor } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { unregisteredSearchAttributes } from '../workflows/searchAttributes';
import { temporalTlsOf, type Config, type TemporalTls } from '../config';

export interface CreateTemporalClientOptions {
  /** Frontend `host:port`, e.g. `TEMPORAL_ADDRESS`. */
  address: string;
  namespace: string;
  /** TLS (and mTLS) from TEMPORAL_TLS_* (`temporalTlsOf`); unset: plain gRPC. */
  tls?: TemporalTls;
  /** Connect on the first call rather than now: the api starts (and answers) while Temporal is down. */
  lazy?: boolean;
  /** Workflow client interceptors, e.g. tracing's (`startTracing().workflowClientInterceptors`). */
  interceptors?: WorkflowClientInterceptor[];
}

export interface TemporalClient {
  client: Client;
  connection: Connection;
  /** Closes the connection; the client is unusable afterwards. */
  close(): Promise<void>;
}

/**
 * The one way our processes build a Temporal client for starting, signalling and querying workflows:
 * the api, the worker, the dev stack, benches and tests.
 */
export async function createTemporalClient({
  address,
  namespace,
  tls,
  lazy = false,
  interceptors,
}: CreateTemporalClientOptions): Promise<TemporalClient> {
  const connection = lazy ? Connection.lazy({ address, tls }) : await Connection.connect({ address, tls });
  const client = new Client({
    connection,
    namespace,
    ...(interceptors && { interceptors: { workflow: interceptors } }),
  });
  return { client, connection, close: () => connection.close() };
}

/** The frontend, namespace and TLS of a process's configuration (TEMPORAL_ADDRESS, _NAMESPACE, _TLS_*). */
export function temporalTargetOf(
  config: Config,
): Pick<CreateTemporalClientOptions, 'address' | 'namespace' | 'tls'> {
  return {
    address: config.TEMPORAL_ADDRESS,
    namespace: config.TEMPORAL_NAMESPACE,
    tls: temporalTlsOf(config),
  };
}

/**
 * Registers our custom search attributes in the namespace when they are missing (a fresh cluster, as
 * in docker-compose); the dev server gets them at launch. Idempotent.
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = unregisteredSearchAttributes(
    Object.fromEntries(Object.entries(customAttributes ?? {}).map(([name, type]) => [name, Number(type)])),
  );
  if (missing.length === 0) return [];
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(
      missing.map(({ name, type }) => [name, encodeSearchAttributeIndexedValueType(type)!]),
    ),
  });
  return missing.map(({ name }) => name);
}

/** Temporal did not accept a start or signal within the request's deadline (down, or overloaded). */
export class TemporalUnavailableError extends Error {
  override name = 'TemporalUnavailableError';
  constructor(timeoutMs: number, options?: { cause?: unknown }) {
    super(`Temporal did not answer within ${timeoutMs} ms`, options);
  }
}

/** gRPC DEADLINE_EXCEEDED (4) and UNAVAILABLE (14), and the SDK's connect-before-deadline failure. */
function isTemporalUnreachable(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 6; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (code === 4 || code === 14) return true;
    if (
      current instanceof Error &&
      /deadline|unavailable|failed to connect|no connection established/i.test(current.message)
    )
      return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Runs a workflow start or signal of a request path with a deadline, so a client never waits on a
 * Temporal outage for longer than `timeoutMs` (TEMPORAL_START_TIMEOUT_MS); an outage or a missed
 * deadline is a TemporalUnavailableError, any other failure passes through.
 */
export async function withTemporalDeadline<T>(
  client: Client,
  timeoutMs: number,
  call: () => Promise<T>,
): Promise<T> {
  // The gRPC deadline and the abort signal cancel the call; the SDK's connection attempts and retry
  // backoff can still outlast them by a second or more, so the answer itself is also raced against the
  // clock. A start that completes after the answer is harmless (starts are idempotent, the reconciler
  // marks it); a late signal is at-least-once, like every signal.
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new TemporalUnavailableError(timeoutMs));
    }, timeoutMs);
  });
  const attempt = client.withAbortSignal(controller.signal, () =>
    client.withDeadline(Date.now() + timeoutMs, call),
  );
  attempt.catch(() => undefined);
  try {
    return await Promise.race([attempt, expired]);
  } catch (error) {
    if (error instanceof TemporalUnavailableError) throw error;
    if (isTemporalUnreachable(error)) throw new TemporalUnavailableError(timeoutMs, { cause: error });
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
