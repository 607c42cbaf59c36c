import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ENTRY_POINT_V07_ADDRESS } from '../../chain/entryPoints';
import {
  type BatchingSignerClient,
  createSignerClient,
  type SignPaymasterDataOutcome,
  type SignPaymasterDataRequest,
} from '../../paymaster/rpc/signerClient';

/**
 * Issue 46: the api's signer client sends the signing requests that arrive while an exchange is in flight
 * as one JSON-RPC batch. Against a stand-in service that records every HTTP request it receives: each
 * caller gets exactly its own answer (matched by id, whatever the order of the answer), a denial per
 * element comes back unchanged, and an exchange that fails fails every caller of its batch as upstream.
 * The real service's batches: signer/server.test.ts; the real pair over the socket: signer/unixSocket.test.ts.
 */

const SECRET = 'batching-test-shared-secret-0123456789';
const TIMEOUT_MS = 300;

interface RpcRequest {
  jsonrpc: string;
  id: string;
  method: string;
  params: [{ userOp: { nonce: string }; mode: string }];
}

/** How the stand-in answers one HTTP request: its body (one request or an array) → status and text. */
type Answer = (body: RpcRequest | RpcRequest[]) => { status: number; text: string; delayMs?: number };

interface StandIn {
  url: string;
  /** Every HTTP request's parsed body, in arrival order. */
  received: (RpcRequest | RpcRequest[])[];
  answer: Answer;
  close(): Promise<void>;
}

/** A signed result whose paymasterData names the request's nonce: who got which answer is visible. */
const resultFor = (request: RpcRequest) => ({
  paymaster: '0x9999999999999999999999999999999999999999',
  paymasterData: `0x00${BigInt(request.params[0].userOp.nonce).toString(16).padStart(64, '0')}`,
  paymasterVerificationGasLimit: '0xc350',
  paymasterPostOpGasLimit: '0x0',
  mode: request.params[0].mode,
});

/** Nonces ≥ 100 are denied (-32000); the rest signed. */
const responseTo = (request: RpcRequest) =>
  BigInt(request.params[0].userOp.nonce) >= 100n
    ? { jsonrpc: '2.0', id: request.id, error: { code: -32000, message: 'paymaster deposit too low' } }
    : { jsonrpc: '2.0', id: request.id, result: resultFor(request) };

/** Answers every element, the batch's responses in reverse order (JSON-RPC matches by id, not position). */
const answerEach: Answer = (body) => ({
  status: 200,
  text: JSON.stringify(Array.isArray(body) ? body.map(responseTo).reverse() : responseTo(body)),
});

async function startStandIn(): Promise<StandIn> {
  const standIn = { received: [], answer: answerEach } as unknown as StandIn;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      standIn.received.push(body);
      const { status, text, delayMs = 0 } = standIn.answer(body);
      const timer = setTimeout(() => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(text);
      }, delayMs);
      response.on('close', () => clearTimeout(timer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  standIn.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  standIn.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return standIn;
}

const request = (nonce: number): SignPaymasterDataRequest => ({
  chainId: 84532,
  entryPoint: ENTRY_POINT_V07_ADDRESS,
  entryPointVersion: '0.7',
  userOp: { sender: '0x4000000000000000000000000000000000000004', nonce: `0x${nonce.toString(16)}` },
  mode: 'sponsored',
  validUntil: 2_000_000_000,
  validAfter: 0,
});

const expectOwnAnswer = (outcome: SignPaymasterDataOutcome, nonce: number) =>
  expect(outcome).toEqual({
    ok: true,
    result: {
      paymaster: '0x9999999999999999999999999999999999999999',
      paymasterData: `0x00${nonce.toString(16).padStart(64, '0')}`,
      paymasterVerificationGasLimit: '0xc350',
      paymasterPostOpGasLimit: '0x0',
    },
  });

let standIn: StandIn;
let client: BatchingSignerClient;
beforeEach(async () => {
  standIn = await startStandIn();
  client = createSignerClient({ url: standIn.url, sharedSecret: SECRET, timeoutMs: TIMEOUT_MS });
});
afterEach(() => standIn.close());

/** The first request goes alone and is held `holdMs`; the `queued` calls made meanwhile form the next batch. */
async function oneThenQueued(queued: number[], holdMs = 100) {
  const answer = standIn.answer;
  standIn.answer = (body) => (Array.isArray(body) ? answer(body) : { ...answer(body), delayMs: holdMs });
  const first = client.signPaymasterData(request(1));
  await new Promise((resolve) => setTimeout(resolve, 20));
  const rest = Promise.all(queued.map((nonce) => client.signPaymasterData(request(nonce))));
  return { first: await first, rest: await rest };
}

describe('concurrent signing requests share one exchange', () => {
  it('ten calls in the same turn: one HTTP request, a batch of ten, each caller its own answer', async () => {
    const nonces = [11, 12, 13, 14, 15, 16, 17, 18, 19, 20];
    const outcomes = await Promise.all(nonces.map((nonce) => client.signPaymasterData(request(nonce))));
    expect(standIn.received).toHaveLength(1);
    const [batch] = standIn.received as RpcRequest[][];
    expect(batch).toHaveLength(10);
    expect(batch!.map((element) => element.params[0].userOp.nonce)).toEqual(
      nonces.map((nonce) => `0x${nonce.toString(16)}`),
    );
    expect(new Set(batch!.map((element) => element.id)).size).toBe(10);
    outcomes.forEach((outcome, index) => expectOwnAnswer(outcome, nonces[index]!));
    expect(client.stats()).toMatchObject({ batches: 1, batchedItems: 10 });
  });

  it('a call alone goes as a single request; calls made while it is in flight go next as one batch', async () => {
    const { first, rest } = await oneThenQueued([2, 3, 4, 5, 6]);
    expect(standIn.received).toHaveLength(2);
    expect(Array.isArray(standIn.received[0])).toBe(false);
    expect(standIn.received[0]).toMatchObject({ jsonrpc: '2.0', method: 'signer_signPaymasterData' });
    expect(standIn.received[1]).toHaveLength(5);
    expectOwnAnswer(first, 1);
    rest.forEach((outcome, index) => expectOwnAnswer(outcome, index + 2));
  });

  it('denials inside a batch come back per caller unchanged, beside its signed neighbours', async () => {
    const nonces = [100, 2, 101, 3];
    const outcomes = await Promise.all(nonces.map((nonce) => client.signPaymasterData(request(nonce))));
    expect(standIn.received).toHaveLength(1);
    const denied = {
      ok: false,
      failure: { kind: 'denied', code: -32000, message: 'paymaster deposit too low' },
    };
    expect(outcomes[0]).toEqual(denied);
    expectOwnAnswer(outcomes[1]!, 2);
    expect(outcomes[2]).toEqual(denied);
    expectOwnAnswer(outcomes[3]!, 3);
  });

  it('at most 64 requests per batch: 100 calls at once are two HTTP requests, 64 and 36', async () => {
    const nonces = Array.from({ length: 100 }, (_, index) => index);
    const outcomes = await Promise.all(nonces.map((nonce) => client.signPaymasterData(request(nonce))));
    expect((standIn.received as RpcRequest[][]).map((batch) => batch.length)).toEqual([64, 36]);
    outcomes.forEach((outcome, index) => expectOwnAnswer(outcome, nonces[index]!));
  });

  it('a batch stays within 1 MiB: large requests at once are split by bytes', async () => {
    // About 66 KB each: 15 fit in 1 MiB, the 16th starts the next batch.
    const large = (nonce: number) => ({
      ...request(nonce),
      userOp: { ...request(nonce).userOp, callData: `0x${'ab'.repeat(32 * 1024)}` },
    });
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, index) => client.signPaymasterData(large(index))),
    );
    expect((standIn.received as RpcRequest[][]).map((batch) => batch.length)).toEqual([15, 5]);
    outcomes.forEach((outcome, index) => expectOwnAnswer(outcome, index));
  });
});

describe('two exchanges in flight (exchangesInFlight: 2, measured and not the default)', () => {
  it('a second request goes at once beside the first; those arriving while both are in flight go next as one batch', async () => {
    const twoAtOnce = createSignerClient({
      url: standIn.url,
      sharedSecret: SECRET,
      timeoutMs: TIMEOUT_MS,
      exchangesInFlight: 2,
    });
    // Single requests are held 100 ms; batches answered at once.
    standIn.answer = (body) =>
      Array.isArray(body) ? answerEach(body) : { ...answerEach(body), delayMs: 100 };
    const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
    const first = twoAtOnce.signPaymasterData(request(1));
    await pause();
    const second = twoAtOnce.signPaymasterData(request(2));
    await pause();
    const rest = Promise.all([3, 4, 5].map((nonce) => twoAtOnce.signPaymasterData(request(nonce))));
    expectOwnAnswer(await first, 1);
    expectOwnAnswer(await second, 2);
    (await rest).forEach((outcome, index) => expectOwnAnswer(outcome, index + 3));
    expect(standIn.received.map((body) => (Array.isArray(body) ? body.length : 1))).toEqual([1, 1, 3]);
  });
});

describe('a batch whose exchange fails fails every caller of it as upstream, never another caller', () => {
  const upstream = (detail: unknown) => ({ ok: false, failure: { kind: 'upstream', detail } });

  it.each([
    ['HTTP 500', () => ({ status: 500, text: '{"error":"boom"}' }), 'answered HTTP 500'],
    [
      'a body that is not JSON',
      () => ({ status: 200, text: '<html>gateway</html>' }),
      'answered a body that is not JSON',
    ],
    [
      'one JSON-RPC error object instead of an array',
      () => ({
        status: 200,
        text: '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}',
      }),
      'answered a batch of 3 with something other than 3 responses',
    ],
    [
      'fewer responses than requests',
      (body: RpcRequest | RpcRequest[]) => ({
        status: 200,
        text: JSON.stringify((body as RpcRequest[]).slice(1).map(responseTo)),
      }),
      'answered a batch of 3 with something other than 3 responses',
    ],
    [
      'responses under ids the batch did not send',
      (body: RpcRequest | RpcRequest[]) => ({
        status: 200,
        text: JSON.stringify(
          (body as RpcRequest[]).map((element, index) => ({
            ...responseTo(element),
            id: index === 1 ? 'x' : element.id,
          })),
        ),
      }),
      "answered a batch whose responses do not carry the requests' ids",
    ],
    [
      'one id twice',
      (body: RpcRequest | RpcRequest[]) => {
        const elements = body as RpcRequest[];
        return {
          status: 200,
          text: JSON.stringify([
            responseTo(elements[0]!),
            responseTo(elements[0]!),
            responseTo(elements[2]!),
          ]),
        };
      },
      "answered a batch whose responses do not carry the requests' ids",
    ],
    [
      'no answer within the timeout',
      () => ({ status: 200, text: '[]', delayMs: TIMEOUT_MS * 4 }),
      `no answer within ${TIMEOUT_MS} ms`,
    ],
  ] as [string, Answer, string][])('%s', async (_case, answer, detail) => {
    standIn.answer = (body) => (Array.isArray(body) ? answer(body) : answerEach(body));
    const { first, rest } = await oneThenQueued([2, 3, 4]);
    expectOwnAnswer(first, 1);
    expect(standIn.received[1]).toHaveLength(3);
    expect(rest).toEqual([upstream(detail), upstream(detail), upstream(detail)]);
    // The next batch is sent and answered as usual.
    standIn.answer = answerEach;
    const again = await Promise.all([5, 6].map((nonce) => client.signPaymasterData(request(nonce))));
    again.forEach((outcome, index) => expectOwnAnswer(outcome, index + 5));
  });

  it('an unreachable service: every caller of the batch is answered upstream at once', async () => {
    await standIn.close();
    const outcomes = await Promise.all([1, 2, 3].map((nonce) => client.signPaymasterData(request(nonce))));
    expect(outcomes).toEqual(
      Array.from({ length: 3 }, () => upstream(expect.stringMatching(/^unreachable: /))),
    );
    standIn = await startStandIn();
  });
});
