import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { ENTRY_POINT_V07_ADDRESS } from '../chain/entryPoints';
import { decodePaymasterData } from '../chain/paymasterData';
import { loadConfig } from '../config';
import { LOCAL_PAYMASTER_SIGNER } from '../dev/chains/deployLocalChain';
import { checkReadiness, signerCheck } from '../health/readiness';
import { createLogger } from '../logging/logger';
import { createSignerClient } from '../paymaster/rpc/signerClient';
import { TEST_STACK_FILE_VARIABLE, testStack } from '../test/harness/stack';
import { type SignerServer, startSignerServer } from './server';

/** The signer on a Unix-domain socket (SIGNER_SOCKET_PATH) and the api's client on `unix://` (SIGNER_URL). */

const SECRET = 'signer-socket-test-secret-0123456789';
const chain = testStack().chains[0]!;
const quiet = createLogger({ level: 'silent', name: 'signer' });
const config = loadConfig({
  LOG_LEVEL: 'silent',
  SIGNER_PRIVATE_KEY: LOCAL_PAYMASTER_SIGNER.privateKey,
  SIGNER_SHARED_SECRET: SECRET,
  DEPLOYMENTS_FILE: process.env[TEST_STACK_FILE_VARIABLE]!,
  [`RPC_URL_${chain.chainId}`]: chain.rpcUrl,
});
let folder: string;
let socketPath: string;
let signer: SignerServer;
/** The signer's log: one `signer rpc` line per request or per batch it received. */
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'signer-socket-'));
  socketPath = join(folder, 'signer.sock');
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(
        ...String(chunk)
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line)),
      );
      done();
    },
  });
  signer = await startSignerServer({
    config,
    port: 0,
    socketPath,
    logger: createLogger({ level: 'info', name: 'signer' }, sink),
  });
});

afterAll(async () => {
  await signer?.stop();
  await rm(folder, { recursive: true, force: true });
});

const operation = {
  sender: '0x1111111111111111111111111111111111111111',
  nonce: '0x7',
  callData: '0xb61d27f6',
  callGasLimit: '0x186a0',
  verificationGasLimit: '0x30d40',
  preVerificationGas: '0xc350',
  maxFeePerGas: '0x3b9aca00',
  maxPriorityFeePerGas: '0x3b9aca00',
};

function signRequest() {
  const now = Math.floor(Date.now() / 1000);
  return {
    chainId: chain.chainId,
    entryPoint: ENTRY_POINT_V07_ADDRESS,
    entryPointVersion: '0.7' as const,
    userOp: operation,
    mode: 'sponsored' as const,
    validUntil: now + 600,
    validAfter: now - 60,
  };
}

it('names its socket URL, and the socket file is this user’s only (mode 0600)', async () => {
  expect(signer.socketUrl).toBe(`unix://${socketPath}`);
  expect((await stat(socketPath)).mode & 0o777).toBe(0o600);
});

it('the api’s client signs through a unix:// SIGNER_URL: the same answer as over TCP', async () => {
  const request = signRequest();
  const sign = (url: string) => createSignerClient({ url, sharedSecret: SECRET }).signPaymasterData(request);
  const [overSocket, overTcp] = [await sign(signer.socketUrl!), await sign(signer.url)];
  if (!overSocket.ok || !overTcp.ok) throw new Error(`not signed: ${JSON.stringify([overSocket, overTcp])}`);
  expect(overSocket.result.paymaster).toBe(chain.contracts.paymasterV07);
  expect(decodePaymasterData(overSocket.result.paymasterData)).toMatchObject({ mode: 'sponsored' });
  // Deterministic signatures (RFC 6979) over the same terms: the socket carried the request the TCP leg
  // did, and signer/server.test.ts checks that signature against the paymaster contract.
  expect(overSocket.result).toEqual(overTcp.result);
});

it('concurrent calls of the api’s client reach the signer as one batch; each caller gets its own signed answer or its own denial', async () => {
  const client = createSignerClient({ url: signer.socketUrl!, sharedSecret: SECRET });
  const now = Math.floor(Date.now() / 1000);
  // Distinct validity windows: a caller given another's answer would decode another validUntil.
  const requests = Array.from({ length: 12 }, (_, index) => ({
    ...signRequest(),
    validUntil: now + 100 + index,
    ...(index % 4 === 3 && { chainId: 999_999 }),
  }));
  const linesBefore = logLines.length;
  const outcomes = await Promise.all(requests.map((request) => client.signPaymasterData(request)));

  const received = logLines.slice(linesBefore).filter((line) => line.msg === 'signer rpc');
  expect(received).toEqual([
    expect.objectContaining({ method: 'batch', requests: 12, signed: 9, refused: 3, invalid: 0, failed: 0 }),
  ]);
  expect(client.stats()).toMatchObject({ batches: 1, batchedItems: 12 });
  outcomes.forEach((outcome, index) => {
    if (index % 4 === 3) {
      expect(outcome).toEqual({
        ok: false,
        failure: { kind: 'denied', code: -32602, message: 'unsupported chain' },
      });
      return;
    }
    if (!outcome.ok) throw new Error(`not signed: ${JSON.stringify(outcome)}`);
    expect(decodePaymasterData(outcome.result.paymasterData)).toMatchObject({
      mode: 'sponsored',
      validUntil: now + 100 + index,
    });
  });
});

it('a wrong secret on the socket is refused as on TCP (the socket is no way around the secret)', async () => {
  const answer = await createSignerClient({
    url: signer.socketUrl!,
    sharedSecret: 'not-the-secret-0123456789',
  }).signPaymasterData(signRequest());
  expect(answer).toEqual({ ok: false, failure: { kind: 'upstream', detail: 'answered HTTP 401' } });
});

it('the api’s readiness checks the signer over its socket, and says when nothing listens there', async () => {
  expect(await checkReadiness([signerCheck(signer.socketUrl!, 1000)], 1000)).toMatchObject({
    ready: true,
    dependencies: [{ name: 'signer', ok: true }],
  });
  expect(
    await checkReadiness([signerCheck(`unix://${join(folder, 'nobody.sock')}`, 1000)], 1000),
  ).toMatchObject({ ready: false, dependencies: [{ name: 'signer', ok: false, problem: 'unreachable' }] });
});

it('a second signer on a socket another one listens on refuses to start; a socket file left by a dead one is replaced', async () => {
  await expect(startSignerServer({ config, port: 0, socketPath, logger: quiet })).rejects.toThrow(
    `SIGNER_SOCKET_PATH ${socketPath}: another process listens on it`,
  );
  const leftOver = join(folder, 'left-over.sock');
  await writeFile(leftOver, '');
  const restarted = await startSignerServer({ config, port: 0, socketPath: leftOver, logger: quiet });
  try {
    const answer = await createSignerClient({
      url: restarted.socketUrl!,
      sharedSecret: SECRET,
    }).signPaymasterData(signRequest());
    expect(answer.ok).toBe(true);
  } finally {
    await restarted.stop();
  }
});
