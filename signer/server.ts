import { createHash, timingSafeEqual } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { type Config, requireSetting } from '../config';
import { loadDeployments } from '../chain/deployments';
import { createPublicClients } from '../chain/publicClients';
import { type Logger, createLogger } from '../logging/logger';
import { createChainFeeLevels } from '../chain/operationBounds';
import { createPaymasterDeposits } from './deposits';
import { fastLocalAccount } from './fastAccount';
import { createPaymasterDataSigner } from './signPaymasterData';
import { SIGNER_BODY_LIMIT_BYTES, SIGNER_MAX_BATCH_REQUESTS } from './protocol';
import { SIGNER_RPC_ERROR_CODES, SignerRpcError } from './signerRpcError';

/**
 * The signing service: JSON-RPC 2.0 over HTTP at `POST /rpc`, authenticated by
 * `Authorization: Bearer <SIGNER_SHARED_SECRET>`. The only process that holds SIGNER_PRIVATE_KEY.
 *
 * | method                   | params                 | result |
 * | signer_signPaymasterData | [SignPaymasterDataRequest] | { paymaster, paymasterData, paymasterVerificationGasLimit, paymasterPostOpGasLimit, mode } |
 *
 * Errors are JSON-RPC errors with HTTP 200 (-32602 unsupported chain / unsupported entry point /
 * token not whitelisted / Invalid params, -32000 paymaster deposit too low); a missing or wrong
 * secret is HTTP 401. It records nothing: the API keeps usage rows.
 *
 * A body may also be a JSON-RPC 2.0 batch (a JSON array of up to SIGNER_MAX_BATCH_REQUESTS requests,
 * answered by an array of their responses): the api sends the signing requests that wait while one
 * exchange is in flight as one (paymaster/rpc/signerClient.ts). Bodies above SIGNER_BODY_LIMIT_BYTES
 * (1 MiB, a batch's included) answer HTTP 413.
 *
 * It listens on SIGNER_HOST:SIGNER_PORT and, with SIGNER_SOCKET_PATH, also on that Unix-domain socket
 * (mode 0600) for an api on the same host: same routes, same secret.
 */

export interface StartSignerServerParameters {
  config: Config;
  /** Defaults to SIGNER_PORT; 0 picks a free port. */
  port?: number;
  /** Defaults to SIGNER_HOST. */
  host?: string;
  /** Defaults to SIGNER_SOCKET_PATH; unset, no socket. */
  socketPath?: string;
  logger?: Logger;
}

export interface SignerServer {
  /** Base URL, e.g. http://127.0.0.1:3100 (the RPC is at `${url}/rpc`). */
  url: string;
  /** `unix:///path/to/signer.sock` when it also listens on a socket (a SIGNER_URL for an api on this host). */
  socketUrl?: string;
  stop(): Promise<void>;
}

type JsonRpcId = string | number | null;

/** Starts the signing service; resolves once it listens. */
export async function startSignerServer({
  config,
  port = config.SIGNER_PORT,
  host = config.SIGNER_HOST,
  socketPath = config.SIGNER_SOCKET_PATH,
  logger = createLogger({ level: config.LOG_LEVEL, name: 'signer' }),
}: StartSignerServerParameters): Promise<SignerServer> {
  const secretDigest = digest(requireSetting(config, 'SIGNER_SHARED_SECRET'));
  // libsecp256k1 (native prebuild) when it loads, viem's signer otherwise: the same signatures.
  const { account, backend } = fastLocalAccount(
    requireSetting(config, 'SIGNER_PRIVATE_KEY') as `0x${string}`,
  );
  const publicClients = createPublicClients(config);
  const deposits = createPaymasterDeposits({ publicClientFor: (chainId) => publicClients.forChain(chainId) });
  const methods: Methods = {
    signer_signPaymasterData: createPaymasterDataSigner({
      account,
      deployments: loadDeployments(config.DEPLOYMENTS_FILE),
      publicClientFor: (chainId) => publicClients.forChain(chainId),
      tokenRates: config.SIGNER_ERC20_TOKENS,
      now: () => new Date(),
      onDepositReadFailure: (chainId, error) =>
        logger.warn({ chainId, errorName: (error as Error)?.name }, 'paymaster deposit could not be read'),
      feeLevels: createChainFeeLevels({ publicClients, logger }),
      deposits,
      bounds: {
        maxValiditySec: config.SIGNER_MAX_VALIDITY_SEC,
        feeBoundBps: config.SIGNER_FEE_BOUND_BPS,
        maxOperationGas: config.SIGNER_MAX_OPERATION_GAS,
        maxDepositShareBps: config.SIGNER_MAX_DEPOSIT_SHARE_BPS,
        rateBandBps: config.SIGNER_ERC20_RATE_BAND_BPS,
      },
    }),
  };

  const serve = (request: IncomingMessage, response: ServerResponse) => {
    handle(request, response).catch((error: unknown) => {
      logger.error({ errorName: (error as Error)?.name }, 'signer request failed');
      if (!response.headersSent) send(response, 500, { error: 'internal error' });
    });
  };
  const server = createServer(serve);
  const socketServer = socketPath ? createServer(serve) : undefined;

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://signer').pathname;
    // Liveness for the api's readiness check and orchestrators: no secret needed, nothing revealed.
    if (path === '/health' && request.method === 'GET') return send(response, 200, { status: 'ok' });
    if (path !== '/rpc') return send(response, 404, { error: 'not found' });
    if (request.method !== 'POST')
      return send(response, 405, { error: 'method not allowed' }, { allow: 'POST' });
    if (!authorized(request.headers.authorization, secretDigest)) {
      request.resume();
      return send(response, 401, { error: 'unauthorized' }, { 'www-authenticate': 'Bearer' });
    }
    const body = await readBody(request);
    if (body === undefined)
      return send(response, 413, { error: `body larger than ${SIGNER_BODY_LIMIT_BYTES} bytes` });

    let message: unknown;
    try {
      message = JSON.parse(body.toString('utf8'));
    } catch {
      return send(response, 200, rpcError(null, SIGNER_RPC_ERROR_CODES.parseError, 'Parse error'));
    }
    if (Array.isArray(message)) return send(response, 200, await answerBatch(message, methods, logger));
    const started = performance.now();
    const answered = await answerRequest(message, methods);
    if (answered.outcome === 'signed')
      logger.info({ method: answered.method, outcome: 'signed', durationMs: elapsed(started) }, 'signer rpc');
    if (answered.outcome === 'refused') {
      const { method, error } = answered;
      logger.info(
        { method, outcome: error.message, code: error.code, durationMs: elapsed(started) },
        'signer rpc',
      );
    }
    send(response, 200, answered.answer);
  }

  const listening = await listenOnAddresses({ server, port, host, socketServer, socketPath }).catch(
    (error: unknown) => {
      deposits.stop();
      throw error;
    },
  );
  logger.info(
    { url: listening.url, socketUrl: listening.socketUrl, signer: account.address, signing: backend },
    'signer listening',
  );
  const { close, ...addresses } = listening;
  return {
    ...addresses,
    stop: async () => {
      deposits.stop();
      await close();
    },
  };
}

type Methods = Record<string, (params: unknown) => Promise<unknown>>;

/**
 * A JSON-RPC 2.0 batch: one response per request, in the requests' order, each as that request alone
 * would have been answered, except that an unexpected failure is that request's -32603 rather than the
 * whole body's HTTP 500. An empty or oversized batch is one -32600 error. One log line per batch.
 */
async function answerBatch(requests: unknown[], methods: Methods, logger: Logger): Promise<unknown> {
  if (requests.length === 0) return rpcError(null, SIGNER_RPC_ERROR_CODES.invalidRequest, 'Invalid Request');
  if (requests.length > SIGNER_MAX_BATCH_REQUESTS)
    return rpcError(
      null,
      SIGNER_RPC_ERROR_CODES.invalidRequest,
      `Invalid Request: a batch holds at most ${SIGNER_MAX_BATCH_REQUESTS} requests, not ${requests.length}`,
    );
  const started = performance.now();
  const outcomes = { signed: 0, refused: 0, invalid: 0, failed: 0 };
  const answers = await Promise.all(
    requests.map(async (element) => {
      try {
        const answered = await answerRequest(element, methods);
        outcomes[answered.outcome]++;
        return answered.answer;
      } catch (error) {
        outcomes.failed++;
        logger.error({ errorName: (error as Error)?.name }, 'signer request failed');
        const id = isRequest(element) ? element.id : null;
        return rpcError(id, SIGNER_RPC_ERROR_CODES.internalError, 'Internal error');
      }
    }),
  );
  logger.info(
    { method: 'batch', requests: requests.length, ...outcomes, durationMs: elapsed(started) },
    'signer rpc',
  );
  return answers;
}

/** A request answered: its JSON-RPC response, and for the log what became of it. */
type Answered =
  | { outcome: 'invalid'; answer: unknown }
  | { outcome: 'signed'; answer: unknown; method: string }
  | { outcome: 'refused'; answer: unknown; method: string; error: SignerRpcError };

/**
 * One JSON-RPC request, a body's or a batch element's: Invalid Request, Unknown method, the method's result
 * or its SignerRpcError. Any other failure is thrown for the caller to answer (HTTP 500 alone, -32603 in a
 * batch).
 */
async function answerRequest(message: unknown, methods: Methods): Promise<Answered> {
  if (!isRequest(message))
    return {
      outcome: 'invalid',
      answer: rpcError(null, SIGNER_RPC_ERROR_CODES.invalidRequest, 'Invalid Request'),
    };
  const { id, method, params } = message;
  const handler = Object.hasOwn(methods, method) ? methods[method] : undefined;
  if (!handler) {
    const answer = rpcError(id, SIGNER_RPC_ERROR_CODES.methodNotFound, `Unknown method ${method}`);
    return { outcome: 'invalid', answer };
  }
  try {
    return { outcome: 'signed', method, answer: { jsonrpc: '2.0', id, result: await handler(params) } };
  } catch (error) {
    if (!(error instanceof SignerRpcError)) throw error;
    return { outcome: 'refused', method, error, answer: rpcError(id, error.code, error.message) };
  }
}

/** TCP at host:port, then the socket when there is one; a failure on the socket closes the TCP listener. */
async function listenOnAddresses({
  server,
  port,
  host,
  socketServer,
  socketPath,
}: {
  server: Server;
  port: number;
  host: string;
  socketServer: Server | undefined;
  socketPath: string | undefined;
}): Promise<{ url: string; socketUrl?: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port: boundPort } = server.address() as AddressInfo;
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${boundPort}`;
  const close = (listener: Server) =>
    new Promise<void>((resolve, reject) => {
      listener.closeAllConnections();
      listener.close((error) => (error ? reject(error) : resolve()));
    });
  if (!socketServer || !socketPath) return { url, close: () => close(server) };
  try {
    await listenOnSocket(socketServer, socketPath);
  } catch (error) {
    await close(server);
    throw error;
  }
  return {
    url,
    socketUrl: `unix://${socketPath}`,
    close: async () => {
      await Promise.all([close(server), close(socketServer)]);
    },
  };
}

/**
 * Listens on a Unix-domain socket readable and writable by this user only. A socket file left by a
 * signer that was killed is removed first; one another process still listens on is not (listen fails).
 */
async function listenOnSocket(server: Server, socketPath: string): Promise<void> {
  if (await answersOnSocket(socketPath))
    throw new Error(`SIGNER_SOCKET_PATH ${socketPath}: another process listens on it`);
  await rm(socketPath, { force: true });
  // The socket file is created with the process umask; 0600 from the start, not chmod afterwards.
  const umask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(umask);
  }
}

function answersOnSocket(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Constant-time comparison of the bearer secret (digests have equal length, so no length leak). */
function authorized(header: string | undefined, secretDigest: Buffer): boolean {
  const match = /^Bearer (.+)$/.exec(header ?? '');
  if (!match) return false;
  return timingSafeEqual(digest(match[1]!), secretDigest);
}

/** The body, or undefined when it exceeds the limit (the rest is drained, not kept, so the answer can still be sent). */
async function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size <= SIGNER_BODY_LIMIT_BYTES) chunks.push(chunk as Buffer);
  }
  return size > SIGNER_BODY_LIMIT_BYTES ? undefined : Buffer.concat(chunks);
}

function isRequest(value: unknown): value is { id: JsonRpcId; method: string; params: unknown } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { jsonrpc, id, method } = value as Record<string, unknown>;
  return (
    jsonrpc === '2.0' &&
    typeof method === 'string' &&
    (typeof id === 'string' || typeof id === 'number' || id === null)
  );
}

function rpcError(id: JsonRpcId, code: number, message: string) {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

function send(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 100) / 100;
}
