import { Writable } from 'node:stream';
import { type Address, type Hex, hexToBigInt, recoverMessageAddress } from 'viem';
import { simulateContract } from 'viem/actions';
import { createLogger } from '../logging/logger';
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from '../chain/entryPoints';
import { decodePaymasterData, sponsorshipHash } from '../chain/paymasterData';
import { loadConfig } from '../config';
import { ManagedPaymasterV08 } from '../contracts/artifacts';
import { findFreePort } from '../dev/services/freePort';
import { TEST_STACK_FILE_VARIABLE, testStack } from '../test/harness/stack';
import { LOCAL_PAYMASTER_SIGNER } from '../dev/chains/deployLocalChain';
import { toPackedUserOperation } from 'viem/account-abstraction';
import { publicClientFor } from '../test/paymaster/smartAccounts';
import { type SignerServer, startSignerServer } from './server';

const SECRET = 'signer-test-shared-secret-0123456789';
const stack = testStack();
const chain = stack.chains[0]!;
const otherChain = stack.chains[1]!;
const logLines: string[] = [];
let signer: SignerServer;

const RATE = '3000000000';

beforeAll(async () => {
  const config = loadConfig({
    LOG_LEVEL: 'info',
    SIGNER_PRIVATE_KEY: LOCAL_PAYMASTER_SIGNER.privateKey,
    SIGNER_SHARED_SECRET: SECRET,
    SIGNER_ERC20_TOKENS: JSON.stringify({ [chain.chainId]: { [chain.contracts.usdc!.toLowerCase()]: RATE } }),
    DEPLOYMENTS_FILE: process.env[TEST_STACK_FILE_VARIABLE]!,
    [`RPC_URL_${chain.chainId}`]: chain.rpcUrl,
    [`RPC_URL_${otherChain.chainId}`]: otherChain.rpcUrl,
    // Mainnet has an RPC but no paymaster in the deployments file.
    RPC_URL_1: chain.rpcUrl,
    // One operation may take at most 0.01 % of the 100 ETH deposit: 0.01 ETH.
    SIGNER_MAX_DEPOSIT_SHARE_BPS: '1',
  });
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  signer = await startSignerServer({
    config,
    port: 0,
    logger: createLogger({ level: 'info', name: 'signer' }, sink),
  });
});

afterAll(async () => {
  await signer?.stop();
});

async function post(body: unknown, { secret = SECRET, raw }: { secret?: string | null; raw?: string } = {}) {
  const response = await fetch(`${signer.url}/rpc`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(secret !== null && { authorization: `Bearer ${secret}` }),
    },
    body: raw ?? JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

function userOp(overrides: Record<string, string> = {}) {
  return {
    sender: '0x1111111111111111111111111111111111111111',
    nonce: '0x0',
    callData: '0xb61d27f6',
    callGasLimit: '0x186a0',
    verificationGasLimit: '0x30d40',
    preVerificationGas: '0xc350',
    maxFeePerGas: '0x3b9aca00',
    maxPriorityFeePerGas: '0x3b9aca00',
    ...overrides,
  };
}

function signRequest(overrides: Record<string, unknown> = {}, id: number | string = 1) {
  const now = Math.floor(Date.now() / 1000);
  return {
    jsonrpc: '2.0',
    id,
    method: 'signer_signPaymasterData',
    params: [
      {
        chainId: chain.chainId,
        entryPoint: ENTRY_POINT_V07_ADDRESS,
        entryPointVersion: '0.7',
        userOp: userOp(),
        mode: 'sponsored',
        validUntil: now + 600,
        validAfter: now - 60,
        ...overrides,
      },
    ],
  };
}

describe('configuration', () => {
  it.each([
    ['SIGNER_ERC20_TOKENS', 'not json'],
    ['SIGNER_ERC20_TOKENS', '{"84532":{"0x1234":"3000000000"}}'],
    ['SIGNER_ERC20_TOKENS', '{"84532":{"0x000000000000000000000000000000000000dEaD":"1.5"}}'],
    ['SIGNER_ERC20_TOKENS', '{"84532":{"0x000000000000000000000000000000000000dEaD":"0"}}'],
    ['SIGNER_ERC20_TOKENS', '{"base":{}}'],
    ['SIGNER_PRIVATE_KEY', '0x1234'],
  ])('a bad %s (%s) is refused naming the variable', (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(
      new RegExp(`^Invalid configuration:\\n  ${variable}: `),
    );
  });
});

describe('authentication', () => {
  it.each([
    ['no Authorization header', null],
    ['a wrong secret', 'not-the-shared-secret-at-all'],
    ['the secret with a suffix', `${SECRET}x`],
    ['an empty bearer', ''],
  ])('%s answers HTTP 401', async (_, secret) => {
    const { status, body } = await post(signRequest(), { secret });
    expect(status).toBe(401);
    expect(body).toEqual({ error: 'unauthorized' });
  });

  it('only POST /rpc exists', async () => {
    expect(
      (await fetch(`${signer.url}/rpc`, { headers: { authorization: `Bearer ${SECRET}` } })).status,
    ).toBe(405);
    expect((await fetch(`${signer.url}/other`, { method: 'POST' })).status).toBe(404);
  });
});

describe('JSON-RPC framing', () => {
  it('a body that is not JSON answers -32700 with id null', async () => {
    const { status, body } = await post(undefined, { raw: '{"jsonrpc":' });
    expect(status).toBe(200);
    expect(body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
  });

  it('a request without jsonrpc 2.0 answers -32600', async () => {
    const { body } = await post({ id: 1, method: 'signer_signPaymasterData', params: [] });
    expect(body.error).toEqual({ code: -32600, message: 'Invalid Request' });
  });

  it('an unknown method answers -32601 and keeps the id', async () => {
    const { body } = await post({ jsonrpc: '2.0', id: 'x7', method: 'eth_sign', params: [] });
    expect(body).toEqual({
      jsonrpc: '2.0',
      id: 'x7',
      error: { code: -32601, message: 'Unknown method eth_sign' },
    });
  });
});

describe('JSON-RPC batches (issue 46: the api sends concurrent signing requests as one body)', () => {
  it('answers each request of a batch as it would alone, in order, with its own id, and logs one line for the batch', async () => {
    const now = Math.floor(Date.now() / 1000);
    const linesBefore = logLines.length;
    const batch = [
      signRequest({ validUntil: now + 300 }, 'signed-1'),
      signRequest({ chainId: 999_999 }, 7),
      signRequest({ mode: 'free' }, 'invalid-params'),
      { id: 'no-version', method: 'signer_signPaymasterData', params: [] },
      { jsonrpc: '2.0', id: 'x7', method: 'eth_sign', params: [] },
      signRequest({ userOp: userOp({ callGasLimit: '0xb71b00' }) }, 'too-costly'),
      signRequest({ validUntil: now + 400 }, 'signed-2'),
    ];
    const { status, body } = await post(batch);
    expect(status).toBe(200);
    expect(body).toHaveLength(7);
    expect(body.map((answer: { id: unknown }) => answer.id)).toEqual([
      'signed-1',
      7,
      'invalid-params',
      null,
      'x7',
      'too-costly',
      'signed-2',
    ]);
    // Each signed answer carries its own request's terms.
    expect(decodePaymasterData(body[0].result.paymasterData)).toMatchObject({ validUntil: now + 300 });
    expect(decodePaymasterData(body[6].result.paymasterData)).toMatchObject({ validUntil: now + 400 });
    expect(body[1].error).toEqual({ code: -32602, message: 'unsupported chain' });
    expect(body[2].error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/^Invalid params: /),
    });
    expect(body[3]).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Invalid Request' },
    });
    expect(body[4].error).toEqual({ code: -32601, message: 'Unknown method eth_sign' });
    expect(body[5].error).toEqual({ code: -32000, message: 'paymaster deposit too low' });
    // The same answers as the requests sent one by one.
    for (const [index, request] of batch.entries()) {
      if (index === 0 || index === 6) continue;
      expect(body[index]).toEqual((await post(request)).body);
    }

    const batchLines = logLines
      .slice(linesBefore)
      .map((line) => JSON.parse(line))
      .filter((line) => line.msg === 'signer rpc' && line.method === 'batch');
    expect(batchLines).toEqual([
      expect.objectContaining({ requests: 7, signed: 2, refused: 3, invalid: 2, failed: 0 }),
    ]);
  });

  it('an empty batch answers one -32600 Invalid Request', async () => {
    const { status, body } = await post([]);
    expect(status).toBe(200);
    expect(body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } });
  });

  it('a batch of more than 64 requests answers one -32600 naming the bound, and signs none of them', async () => {
    const linesBefore = logLines.length;
    const { status, body } = await post(Array.from({ length: 65 }, (_, index) => signRequest({}, index)));
    expect(status).toBe(200);
    expect(body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'Invalid Request: a batch holds at most 64 requests, not 65' },
    });
    expect(logLines.slice(linesBefore).some((line) => line.includes('"outcome":"signed"'))).toBe(false);
    // 64 is within the bound.
    const within = await post(Array.from({ length: 64 }, (_, index) => signRequest({}, index)));
    expect(within.body).toHaveLength(64);
    expect(within.body.every((answer: { result?: unknown }) => answer.result)).toBe(true);
  });

  it('a body above 1 MiB, batch or not, answers HTTP 413; a batch just under it is read', async () => {
    // One request with 32 KiB of callData is about 66 KB: 16 of them pass 1 MiB.
    const large = (id: number) =>
      signRequest({ userOp: userOp({ callData: `0x${'ab'.repeat(32 * 1024)}` }) }, id);
    const over = await post(Array.from({ length: 16 }, (_, index) => large(index)));
    expect(over.status).toBe(413);
    expect(over.body).toEqual({ error: 'body larger than 1048576 bytes' });
    const under = await post(Array.from({ length: 15 }, (_, index) => large(index)));
    expect(under.status).toBe(200);
    expect(under.body).toHaveLength(15);
    expect(under.body.every((answer: { result?: unknown }) => answer.result)).toBe(true);
  });

  it('a batch without the secret answers HTTP 401', async () => {
    const { status, body } = await post([signRequest()], { secret: 'not-the-shared-secret-at-all' });
    expect(status).toBe(401);
    expect(body).toEqual({ error: 'unauthorized' });
  });
});

describe('signer_signPaymasterData', () => {
  it('signs sponsored data for the chain paymaster that its contract validates without a signature failure', async () => {
    const request = signRequest({}, 'req-1');
    const { status, body } = await post(request);
    expect(status).toBe(200);
    expect(body.id).toBe('req-1');
    const result = body.result;
    expect(result).toMatchObject({ paymaster: chain.contracts.paymasterV07, mode: 'sponsored' });
    // No gas limits in the operation: the signer's minimums are signed and returned.
    expect(result.paymasterVerificationGasLimit).toBe('0xc350');
    expect(result.paymasterPostOpGasLimit).toBe('0x0');

    const decoded = decodePaymasterData(result.paymasterData)!;
    expect(decoded).toMatchObject({
      mode: 'sponsored',
      validUntil: request.params[0]!.validUntil,
      validAfter: request.params[0]!.validAfter,
    });
    const operation = operationOf(request.params[0]!.userOp, result);
    const hash = sponsorshipHash({
      userOperation: operation,
      chainId: chain.chainId,
      paymaster: result.paymaster,
      terms: decoded,
    });
    expect(await recoverMessageAddress({ message: { raw: hash }, signature: decoded.signature })).toBe(
      LOCAL_PAYMASTER_SIGNER.address,
    );

    const validationData = await validateOnChain(ENTRY_POINT_V07_ADDRESS, result.paymaster, {
      ...operation,
      paymasterData: result.paymasterData,
    });
    expect(validationData & 1n).toBe(0n);
  });

  it('signs ERC-20 data with the whitelisted rate for the v0.8 paymaster', async () => {
    const request = signRequest({
      entryPoint: ENTRY_POINT_V08_ADDRESS,
      entryPointVersion: '0.8',
      mode: 'erc20',
      token: chain.contracts.usdc,
      userOp: userOp({ paymasterVerificationGasLimit: '0x249f0', paymasterPostOpGasLimit: '0x186a0' }),
    });
    const { body } = await post(request);
    expect(body.result).toMatchObject({
      paymaster: chain.contracts.paymasterV08,
      mode: 'erc20',
      // Larger than the minimums: kept as the operation asked.
      paymasterVerificationGasLimit: '0x249f0',
      paymasterPostOpGasLimit: '0x186a0',
    });
    const decoded = decodePaymasterData(body.result.paymasterData);
    expect(decoded).toMatchObject({ mode: 'erc20', token: chain.contracts.usdc, exchangeRate: BigInt(RATE) });
    const operation = operationOf(request.params[0]!.userOp, body.result);
    const validationData = await validateOnChain(ENTRY_POINT_V08_ADDRESS, body.result.paymaster, {
      ...operation,
      paymasterData: body.result.paymasterData,
    });
    expect(validationData & 1n).toBe(0n);
  });

  it('finding 8: signs the exchange rate the API priced when it lies within SIGNER_ERC20_RATE_BAND_BPS of the configured rate, and refuses one outside it', async () => {
    const erc20 = (exchangeRate: bigint) =>
      post(
        signRequest({
          mode: 'erc20',
          token: chain.contracts.usdc,
          exchangeRate: `0x${exchangeRate.toString(16)}`,
        }),
      );
    // The default band (30000 bps) signs from a third of the configured 3,000,000,000 to three times it.
    for (const rate of [1_000_000_000n, 3_300_000_000n, 9_000_000_000n]) {
      const { body } = await erc20(rate);
      expect(decodePaymasterData(body.result.paymasterData)).toMatchObject({ exchangeRate: rate });
    }
    for (const rate of [0n, 1n, 999_999_999n, 9_000_000_001n, 2n ** 255n]) {
      const { body } = await erc20(rate);
      expect(body.error).toEqual({
        code: -32602,
        message: `operation out of bounds: exchangeRate ${rate} is outside the band of 30000 bps around the token's configured rate`,
      });
    }
    // A rate is for ERC-20 mode only.
    const sponsored = await post(signRequest({ exchangeRate: '0xb2d05e00' }));
    expect(sponsored.body.error.message).toMatch(
      /^Invalid params: 0.exchangeRate: exchangeRate is refused in sponsored mode/,
    );
  });

  it.each([
    ['a chain without a paymaster deployment', { chainId: 8453 }],
    ['a chain without an RPC URL', { chainId: stack.chains[2]!.chainId }],
    ['an unknown chain', { chainId: 999_999 }],
  ])('%s answers -32602 unsupported chain', async (_, overrides) => {
    const { body } = await post(signRequest(overrides));
    expect(body.error).toEqual({ code: -32602, message: 'unsupported chain' });
  });

  it('an EntryPoint that is not the paymaster’s for the version answers -32602 unsupported entry point', async () => {
    const { body } = await post(
      signRequest({ entryPoint: ENTRY_POINT_V08_ADDRESS, entryPointVersion: '0.7' }),
    );
    expect(body.error).toEqual({ code: -32602, message: 'unsupported entry point' });
  });

  it.each([
    ['a token that is not whitelisted', { token: '0x000000000000000000000000000000000000dEaD' }],
    ['a token whitelisted only on another chain', { chainId: otherChain.chainId }],
  ])('%s answers -32602 token not whitelisted', async (_, overrides) => {
    const { body } = await post(signRequest({ mode: 'erc20', token: chain.contracts.usdc, ...overrides }));
    expect(body.error).toEqual({ code: -32602, message: 'token not whitelisted' });
  });

  it.each([
    ['params not an array of one object', { params: {} }],
    ['a missing gas field', { userOp: { ...userOp(), callGasLimit: undefined } }],
    ['a gas field above uint128', { userOp: userOp({ callGasLimit: `0x1${'0'.repeat(32)}` }) }],
    ['validUntil not after validAfter', { validUntil: 1_700_000_000, validAfter: 1_700_000_000 }],
    ['validUntil in the past', { validUntil: 1_700_000_000, validAfter: 0 }],
    ['a token in sponsored mode', { token: '0x000000000000000000000000000000000000dEaD' }],
    ['ERC-20 mode without a token', { mode: 'erc20' }],
    ['an unknown mode', { mode: 'free' }],
  ])('%s answers -32602 Invalid params', async (_, overrides) => {
    const request = 'params' in overrides ? { ...signRequest(), ...overrides } : signRequest(overrides);
    const { body } = await post(request);
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toMatch(/^Invalid params: /);
  });

  it('an unreachable chain RPC answers -32603 without the RPC URL or its credential', async () => {
    const port = await findFreePort();
    const config = loadConfig({
      SIGNER_PRIVATE_KEY: LOCAL_PAYMASTER_SIGNER.privateKey,
      SIGNER_SHARED_SECRET: SECRET,
      DEPLOYMENTS_FILE: process.env[TEST_STACK_FILE_VARIABLE]!,
      [`RPC_URL_${chain.chainId}`]: `http://127.0.0.1:${port}/v2/rpc-provider-key-4f9a`,
    });
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const isolated = await startSignerServer({
      config,
      port: 0,
      logger: createLogger({ level: 'trace' }, sink),
    });
    try {
      const response = await fetch(`${isolated.url}/rpc`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SECRET}` },
        body: JSON.stringify(signRequest()),
      });
      const text = await response.text();
      expect(JSON.parse(text).error).toEqual({
        code: -32603,
        message: 'Internal error: paymaster deposit unavailable',
      });
      expect(text).not.toContain('rpc-provider-key');
      expect(lines.join('')).not.toContain('rpc-provider-key');
    } finally {
      await isolated.stop();
    }
  });

  it('the signing key and the shared secret never reach the log', () => {
    const log = logLines.join('\n');
    expect(logLines.length).toBeGreaterThan(5);
    expect(log).not.toContain(LOCAL_PAYMASTER_SIGNER.privateKey.slice(2));
    expect(log).not.toContain(SECRET);
  });
});

describe('issue 13 finding 1: the ERC-20 (user_paid) mode drains the deposit (the signer bounds the cost)', () => {
  it.each(['sponsored', 'erc20'] as const)(
    'a %s operation whose maximum cost is above its share of the paymaster deposit answers -32000 paymaster deposit too low',
    async (mode) => {
      // 12,000,000 gas × 1 gwei = 0.012 ETH: far below the whole deposit, above the 0.01 ETH one operation may take.
      const { body } = await post(
        signRequest({
          userOp: userOp({ callGasLimit: '0xb71b00' }),
          ...(mode === 'erc20' && { mode, token: chain.contracts.usdc }),
        }),
      );
      expect(body.error).toEqual({ code: -32000, message: 'paymaster deposit too low' });
    },
  );
});

describe('issue 13 finding 7: overflow edge cases (the signer enforces its own bounds)', () => {
  it('a validUntil more than SIGNER_MAX_VALIDITY_SEC ahead answers -32602 Invalid params', async () => {
    const now = Math.floor(Date.now() / 1000);
    const { body } = await post(signRequest({ validUntil: now + 86_400, validAfter: 0 }));
    expect(body.error).toEqual({
      code: -32602,
      message: 'Invalid params: validUntil is more than 3600 s ahead',
    });
  });

  it.each([
    ['maxFeePerGas', { maxFeePerGas: '0x174876e800' }],
    ['maxPriorityFeePerGas', { maxFeePerGas: '0x3b9aca00', maxPriorityFeePerGas: '0x174876e800' }],
  ])(
    "a %s far above the chain's current fees answers -32602 operation out of bounds",
    async (field, fees) => {
      const { body } = await post(signRequest({ userOp: userOp(fees) }));
      expect(body.error).toEqual({
        code: -32602,
        message: expect.stringMatching(
          new RegExp(`^operation out of bounds: ${field} 100000000000 wei is above `),
        ),
      });
    },
  );

  it('gas limits above SIGNER_MAX_OPERATION_GAS answer -32602 operation out of bounds', async () => {
    const { body } = await post(signRequest({ userOp: userOp({ callGasLimit: '0x2000000' }) }));
    expect(body.error).toEqual({
      code: -32602,
      message: expect.stringMatching(
        /^operation out of bounds: the operation's gas limits add up to \d+, above the limit of 30000000$/,
      ),
    });
  });
});

describe('the signer of the test stack', () => {
  it('runs for the whole run with the local token whitelist', async () => {
    const now = Math.floor(Date.now() / 1000);
    const response = await fetch(`${stack.signer.url}/rpc`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.signer.sharedSecret}` },
      body: JSON.stringify({
        ...signRequest({ mode: 'erc20', token: chain.contracts.usdt, validUntil: now + 60, validAfter: 0 }),
      }),
    });
    const body = (await response.json()) as { result: { paymasterData: Hex } };
    expect(decodePaymasterData(body.result.paymasterData)).toMatchObject({
      token: chain.contracts.usdt,
      exchangeRate: BigInt(stack.signer.erc20Tokens[String(chain.chainId)]![chain.contracts.usdt!]!),
    });
  });
});

/** The unpacked operation the signer signed: the request's fields plus the returned paymaster gas limits. */
function operationOf(
  op: Record<string, string>,
  result: { paymaster: Address; paymasterVerificationGasLimit: Hex; paymasterPostOpGasLimit: Hex },
) {
  return {
    sender: op.sender as Address,
    nonce: hexToBigInt(op.nonce as Hex),
    callData: op.callData as Hex,
    callGasLimit: hexToBigInt(op.callGasLimit as Hex),
    verificationGasLimit: hexToBigInt(op.verificationGasLimit as Hex),
    preVerificationGas: hexToBigInt(op.preVerificationGas as Hex),
    maxFeePerGas: hexToBigInt(op.maxFeePerGas as Hex),
    maxPriorityFeePerGas: hexToBigInt(op.maxPriorityFeePerGas as Hex),
    paymaster: result.paymaster,
    paymasterVerificationGasLimit: hexToBigInt(result.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: hexToBigInt(result.paymasterPostOpGasLimit),
    signature: '0x' as Hex,
  };
}

/** validatePaymasterUserOp as the EntryPoint calls it (eth_call from the EntryPoint's address). */
async function validateOnChain(
  entryPoint: Address,
  paymaster: Address,
  op: ReturnType<typeof operationOf> & { paymasterData: Hex },
) {
  const { result } = await simulateContract(publicClientFor(chain.rpcUrl), {
    account: entryPoint,
    address: paymaster,
    abi: ManagedPaymasterV08.abi,
    functionName: 'validatePaymasterUserOp',
    args: [toPackedUserOperation(op), `0x${'11'.repeat(32)}`, 0n],
  });
  return result[1];
}
