import { Writable } from 'node:stream';
import { Kysely, PostgresDialect } from 'kysely';
import { Pool } from 'pg';
import { type Address, concat, numberToHex } from 'viem';
import { createLogger } from '../../logging/logger';
import type { Database } from '../../db/schema';
import { authenticateClient } from '../../paymaster/policy/clientChecks';
import { findActivePaymasterClient } from '../../db/paymasterClients';
import { proxyBundlerRequest } from '../../paymaster/bundler/bundlerProxy';
import { ENTRY_POINT_V07_ADDRESS } from '../../chain/entryPoints';
import { creditPrepaidBalance } from '../../db/prepaidLedger';
import { findFreePort } from '../../dev/services/freePort';
import { type TestApp, type TestResponse, startTestApp } from '../harness/app';
import { localContractsAs, writeDeploymentsFile } from '../harness/deployments';
import { type SignedInMerchant, signInNewMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { type FakeBundlerUpstream, startFakeBundlerUpstream } from './fakeBundlerUpstream';
import { createPaymasterClient, usageRows } from './paymasterApi';

/**
 * SPEC "Paymaster bundler proxy": every refusal of `POST /v1/paymaster/bundler/{chainId}` with its
 * status and body, the byte-for-byte relay, the 502 answers, and the provider credential that must
 * never reach a caller or a log line. The upstream is a fake provider on a real port; the relay to a
 * real bundler (Alto) is in the end-to-end tests.
 */

const stack = testStack();
const TESTNET = stack.chains.find((chain) => chain.chainId === 84532)!;
const MAINNET = 1;
/** What a provider URL carries: a key in the path and one in the query. */
const PATH_KEY = 'alchemy-path-key-7c1d2e3f4a5b';
const QUERY_KEY = 'pimlico-query-key-9f8e7d6c5b4a';
const FOREIGN_PAYMASTER: Address = '0x00000000000000000000000000000000000Fa4e5';

let upstream: FakeBundlerUpstream;
let app: TestApp;
let merchant: SignedInMerchant;
/** Every response text the tests received, checked for the credential at the end. */
const responses: string[] = [];

beforeAll(async () => {
  upstream = await startFakeBundlerUpstream();
  const deployments = writeDeploymentsFile([...stack.chains, ...localContractsAs([MAINNET])]);
  app = await startTestApp({
    DEPLOYMENTS_FILE: deployments,
    [`BUNDLER_URL_${TESTNET.chainId}`]: `${upstream.origin}/v2/${PATH_KEY}?apikey=${QUERY_KEY}`,
    [`BUNDLER_URL_${MAINNET}`]: `${upstream.origin}/mainnet/${PATH_KEY}?apikey=${QUERY_KEY}`,
  });
  merchant = await signInNewMerchant(app);
});

afterAll(async () => {
  await app?.close();
  await upstream?.close();
});

beforeEach(() => {
  upstream.replyWith({
    status: 200,
    contentType: 'application/json',
    body: '{"jsonrpc":"2.0","id":1,"result":"0x14a34"}',
  });
});

interface BundlerCall {
  clientId?: string;
  queryClientId?: string;
  chainId?: string | number;
  body?: string;
  headers?: Record<string, string>;
  via?: TestApp;
}

async function bundler({
  clientId,
  queryClientId,
  chainId = TESTNET.chainId,
  body,
  headers = {},
  via = app,
}: BundlerCall): Promise<TestResponse> {
  const query = queryClientId !== undefined ? `?clientId=${encodeURIComponent(queryClientId)}` : '';
  const response = await via.request(`/v1/paymaster/bundler/${chainId}${query}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(clientId !== undefined && { 'x-client-id': clientId }),
      ...headers,
    },
    body: body ?? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
  });
  responses.push(response.text);
  return response;
}

/** A bundler request carrying one user operation, with our paymaster (or another) and a mode byte. */
function userOperationRequest(
  method: 'eth_sendUserOperation' | 'eth_estimateUserOperationGas',
  paymaster?: { address: Address; modeByte: number },
): string {
  const op: Record<string, string> = {
    sender: '0x2222222222222222222222222222222222222222',
    nonce: '0x0',
    callData: '0x',
    callGasLimit: '0x0',
    verificationGasLimit: '0x0',
    preVerificationGas: '0x0',
    maxFeePerGas: '0x0',
    maxPriorityFeePerGas: '0x0',
    signature: '0x',
  };
  if (paymaster) {
    op.paymaster = paymaster.address;
    op.paymasterData = concat([numberToHex(paymaster.modeByte, { size: 1 }), `0x${'00'.repeat(77)}`]);
  }
  return JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: [op, ENTRY_POINT_V07_ADDRESS] });
}

const ourPaymaster = TESTNET.contracts.paymasterV07!;
const sponsored = { address: ourPaymaster, modeByte: 0 };
const tokenPaid = { address: ourPaymaster, modeByte: 1 };

function expectProxyError(response: TestResponse, status: number, message: RegExp): void {
  expect(response.status).toBe(status);
  expect(response.body).toEqual({ error: { message: expect.stringMatching(message), type: 'error' } });
  expect(response.body.error.message).not.toMatch(/^Policy denied/);
}

describe('client id (framework-style bodies)', () => {
  it('a missing client id answers 401 paymaster_unauthorized', async () => {
    const response = await bundler({});
    expect(response.status).toBe(401);
    expect(response.body).toEqual({
      statusCode: 401,
      message: expect.stringMatching(/^paymaster_unauthorized/),
      error: 'Unauthorized',
    });
  });

  it('an unknown client id answers 401', async () => {
    const response = await bundler({ clientId: `pmc_test_${'0'.repeat(32)}` });
    expect(response.status).toBe(401);
    expect(response.body.message).toMatch(/^paymaster_unauthorized/);
  });

  it('a revoked client id answers 401', async () => {
    const client = await createPaymasterClient(app, merchant);
    expect(
      (await app.request(`/v1/paymaster/clients/${client.id}`, { method: 'DELETE', headers: merchant.auth }))
        .status,
    ).toBe(200);
    expect((await bundler({ clientId: client.clientId })).status).toBe(401);
  });

  it('the query clientId is accepted, and the header wins over it', async () => {
    const client = await createPaymasterClient(app, merchant);
    const unknown = `pmc_test_${'f'.repeat(32)}`;
    expect((await bundler({ queryClientId: client.clientId })).status).toBe(200);
    expect((await bundler({ clientId: client.clientId, queryClientId: unknown })).status).toBe(200);
    expect((await bundler({ clientId: unknown, queryClientId: client.clientId })).status).toBe(401);
  });

  it('an Origin outside allowedOrigins answers 403 paymaster_origin_not_allowed, and a missing one too', async () => {
    const client = await createPaymasterClient(app, merchant, { allowedOrigins: ['https://shop.example'] });
    for (const headers of [{ origin: 'https://evil.example' }, {}] as Record<string, string>[]) {
      const response = await bundler({ clientId: client.clientId, headers });
      expect(response.status).toBe(403);
      expect(response.body).toEqual({
        statusCode: 403,
        message: expect.stringMatching(/^paymaster_origin_not_allowed/),
        error: 'Forbidden',
      });
    }
    expect(
      (await bundler({ clientId: client.clientId, headers: { origin: 'https://shop.example' } })).status,
    ).toBe(200);
  });
});

describe('chain id path segment', () => {
  it.each(['base', '0x14a34', '84532.0', '1e3', ' 84532'])(
    '%j answers 400 Validation failed (numeric string is expected)',
    async (chainId) => {
      const client = await createPaymasterClient(app, merchant);
      const response = await bundler({ clientId: client.clientId, chainId: encodeURIComponent(chainId) });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        statusCode: 400,
        message: 'Validation failed (numeric string is expected)',
        error: 'Bad Request',
        errors: [{ field: 'chainId', message: 'numeric string is expected' }],
      });
    },
  );

  it('is checked after the client id: no client id and a bad chain id answers 401', async () => {
    expect((await bundler({ chainId: 'base' })).status).toBe(401);
  });
});

describe('client policy (bodies { error: { message, type } }, no Policy denied prefix)', () => {
  it('a chain outside allowedChainIds answers 403 paymaster_chain_not_allowed and records denied_chain', async () => {
    const own = await signInNewMerchant(app);
    const client = await createPaymasterClient(app, own, { allowedChainIds: [84532] });
    expectProxyError(
      await bundler({ clientId: client.clientId, chainId: 421614 }),
      403,
      /^paymaster_chain_not_allowed/,
    );
    expectProxyError(
      await bundler({ clientId: client.clientId, chainId: 999 }),
      403,
      /^paymaster_chain_not_allowed/,
    );
    const rows = await usageRows(app, own);
    expect(rows[0]).toMatchObject({ status: 'denied_chain', chainId: 999, clientId: client.clientId });
  });

  it('a live key on a testnet answers 403 paymaster_key_network_class_mismatch', async () => {
    const client = await createPaymasterClient(app, merchant, {
      environment: 'live',
      allowedChainIds: [84532],
    });
    expectProxyError(
      await bundler({ clientId: client.clientId }),
      403,
      /^paymaster_key_network_class_mismatch/,
    );
  });

  it('a test key on a mainnet answers 403 paymaster_key_network_class_mismatch', async () => {
    const client = await createPaymasterClient(app, merchant, {
      environment: 'test',
      allowedChainIds: [MAINNET],
    });
    expectProxyError(
      await bundler({ clientId: client.clientId, chainId: MAINNET }),
      403,
      /^paymaster_key_network_class_mismatch/,
    );
  });

  it.each([
    ['sponsored', 'an ERC-20 (mode 1) operation', tokenPaid],
    ['user_paid', 'a sponsored (mode 0) operation', sponsored],
  ] as const)(
    'a %s client sending %s on our paymaster answers 403 paymaster_gas_mode_not_allowed',
    async (gasMode, _, paymaster) => {
      const own = await signInNewMerchant(app);
      const client = await createPaymasterClient(app, own, { gasMode });
      const before = upstream.requests.length;
      for (const method of ['eth_sendUserOperation', 'eth_estimateUserOperationGas'] as const) {
        expectProxyError(
          await bundler({ clientId: client.clientId, body: userOperationRequest(method, paymaster) }),
          403,
          /^paymaster_gas_mode_not_allowed/,
        );
      }
      expect(upstream.requests.length).toBe(before);
      const [row] = await usageRows(app, own);
      expect(row).toMatchObject({
        status: 'denied_gas_mode',
        method: 'eth_estimateUserOperationGas',
        mode: paymaster.modeByte === 0 ? 'sponsored' : 'user_paid',
        sender: '0x2222222222222222222222222222222222222222',
        chainId: TESTNET.chainId,
      });
    },
  );

  it('one offending operation in a batch refuses the whole batch', async () => {
    const client = await createPaymasterClient(app, merchant, { gasMode: 'sponsored' });
    const batch = `[${userOperationRequest('eth_estimateUserOperationGas', sponsored)},${userOperationRequest('eth_sendUserOperation', tokenPaid)}]`;
    expectProxyError(
      await bundler({ clientId: client.clientId, body: batch }),
      403,
      /^paymaster_gas_mode_not_allowed/,
    );
  });

  it.each([
    ['user_paid', 'an operation without a paymaster (self-paid)', undefined],
    ['user_paid', 'an operation with another paymaster', { address: FOREIGN_PAYMASTER, modeByte: 0 }],
    ['sponsored', 'a sponsored operation', sponsored],
    ['user_paid', 'an ERC-20 operation', tokenPaid],
    ['both', 'an ERC-20 operation', tokenPaid],
  ] as const)('a %s client may relay %s', async (gasMode, _, paymaster) => {
    const client = await createPaymasterClient(app, merchant, { gasMode });
    expect(
      (
        await bundler({
          clientId: client.clientId,
          body: userOperationRequest('eth_sendUserOperation', paymaster),
        })
      ).status,
    ).toBe(200);
  });

  it('a sponsored operation on a mainnet with no prepaid balance answers 402 paymaster_billing_balance_exhausted, then passes once topped up', async () => {
    const own = await signInNewMerchant(app);
    const client = await createPaymasterClient(app, own, {
      environment: 'live',
      allowedChainIds: [MAINNET],
      gasMode: 'both',
    });
    const mainnetPaymaster = {
      address: localContractsAs([MAINNET])[0]!.contracts.paymasterV08!,
      modeByte: 0,
    };
    const body = userOperationRequest('eth_sendUserOperation', mainnetPaymaster);
    expectProxyError(
      await bundler({ clientId: client.clientId, chainId: MAINNET, body }),
      402,
      /^paymaster_billing_balance_exhausted/,
    );
    expect((await usageRows(app, own))[0]).toMatchObject({
      status: 'denied_billing_balance',
      chainId: MAINNET,
      mode: 'sponsored',
    });

    // User-paid gas needs no prepaid balance, and neither do plain bundler calls.
    const tokenBody = userOperationRequest('eth_sendUserOperation', { ...mainnetPaymaster, modeByte: 1 });
    expect((await bundler({ clientId: client.clientId, chainId: MAINNET, body: tokenBody })).status).toBe(
      200,
    );
    expect((await bundler({ clientId: client.clientId, chainId: MAINNET })).status).toBe(200);

    await creditPrepaidBalance(app.db, {
      merchantId: own.merchantId,
      amountUsd: '25',
      description: 'test top-up',
    });
    expect((await bundler({ clientId: client.clientId, chainId: MAINNET, body })).status).toBe(200);
  });

  it('a body that is not JSON answers 400 before anything is relayed', async () => {
    const client = await createPaymasterClient(app, merchant);
    const before = upstream.requests.length;
    const response = await bundler({
      clientId: client.clientId,
      body: 'eth_chainId please',
      headers: { 'content-type': 'application/octet-stream' },
    });
    expectProxyError(response, 400, /JSON-RPC request/);
    expect(upstream.requests.length).toBe(before);
  });
});

describe('issue 13 finding 6: the bundler proxy relays any method with our provider credential', () => {
  const call = (method: string, id: number | string = 3) =>
    JSON.stringify({ jsonrpc: '2.0', id, method, params: [] });

  it.each([
    'debug_traceCall',
    'eth_sendRawTransaction',
    'anvil_setBalance',
    'alchemy_getTokenBalances',
    'eth_call',
  ])('%s answers JSON-RPC -32601 without reaching the provider', async (method) => {
    const client = await createPaymasterClient(app, merchant);
    const before = upstream.requests.length;
    const response = await bundler({ clientId: client.clientId, body: call(method, 'x9') });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      jsonrpc: '2.0',
      id: 'x9',
      error: { code: -32601, message: `Method not found: the bundler proxy does not relay ${method}` },
    });
    expect(upstream.requests.length).toBe(before);
  });

  it.each([
    'eth_sendUserOperation',
    'eth_estimateUserOperationGas',
    'eth_getUserOperationByHash',
    'eth_getUserOperationReceipt',
    'eth_supportedEntryPoints',
    'eth_chainId',
    'pimlico_getUserOperationGasPrice',
  ])(
    '%s (docs/paymaster.md "The bundler proxy (`POST /v1/paymaster/bundler/{chainId}`)") is relayed',
    async (method) => {
      const client = await createPaymasterClient(app, merchant);
      const before = upstream.requests.length;
      expect((await bundler({ clientId: client.clientId, body: call(method) })).status).toBe(200);
      expect(upstream.requests.length).toBe(before + 1);
    },
  );

  it('a batch holding a method outside the set is answered without reaching the provider: -32601 for it, -32600 for the rest', async () => {
    const client = await createPaymasterClient(app, merchant);
    const before = upstream.requests.length;
    const response = await bundler({
      clientId: client.clientId,
      body: `[${call('eth_chainId', 1)},${call('debug_traceTransaction', 2)}]`,
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32600,
          message: 'Invalid Request: not relayed, the batch holds a method the proxy does not relay',
        },
      },
      {
        jsonrpc: '2.0',
        id: 2,
        error: {
          code: -32601,
          message: 'Method not found: the bundler proxy does not relay debug_traceTransaction',
        },
      },
    ]);
    expect(upstream.requests.length).toBe(before);
  });

  it('a batch above 20 requests (or an empty one) answers 400 without reaching the provider', async () => {
    const client = await createPaymasterClient(app, merchant);
    const before = upstream.requests.length;
    const batchOf = (size: number) =>
      `[${Array.from({ length: size }, (_, index) => call('eth_chainId', index)).join(',')}]`;
    expectProxyError(
      await bundler({ clientId: client.clientId, body: batchOf(21) }),
      400,
      /^the batch holds 21 requests; the bundler proxy relays at most 20$/,
    );
    expectProxyError(await bundler({ clientId: client.clientId, body: '[]' }), 400, /^the batch is empty$/);
    expect(upstream.requests.length).toBe(before);
    expect((await bundler({ clientId: client.clientId, body: batchOf(20) })).status).toBe(200);
    expect(upstream.requests.length).toBe(before + 1);
  });

  it('the prepaid balance is read once per request, however many sponsored operations its batch carries', async () => {
    const own = await signInNewMerchant(app);
    const client = await createPaymasterClient(app, own, {
      environment: 'live',
      allowedChainIds: [MAINNET],
      gasMode: 'both',
    });
    await creditPrepaidBalance(app.db, { merchantId: own.merchantId, amountUsd: '5', description: 'top-up' });
    const mainnetPaymaster = localContractsAs([MAINNET])[0]!.contracts.paymasterV08!;
    const operation = JSON.parse(
      userOperationRequest('eth_sendUserOperation', { address: mainnetPaymaster, modeByte: 0 }),
    );
    const batch = Buffer.from(JSON.stringify(Array.from({ length: 10 }, (_, id) => ({ ...operation, id }))));

    const balanceReads: string[] = [];
    const counting = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: new Pool({ connectionString: stack.databaseUrl, max: 2 }) }),
      log: (event) => {
        if (/prepaid_(balances|ledger_entries)/.test(event.query.sql)) balanceReads.push(event.query.sql);
      },
    });
    try {
      const authenticated = await authenticateClient(
        (id) => findActivePaymasterClient(app.db, id),
        client.clientId,
      );
      if (!authenticated.ok) throw new Error('the client must authenticate');
      const outcome = await proxyBundlerRequest(
        {
          db: counting,
          logger: createLogger({ level: 'silent' }, new Writable({ write: (_c, _e, done) => done() })),
          bundlerUrlFor: () => `${upstream.origin}/mainnet`,
          paymastersOn: () => [mainnetPaymaster],
        },
        { client: authenticated.client, chainId: MAINNET, rawBody: batch },
      );
      expect(outcome.kind).toBe('relayed');
      expect(balanceReads).toHaveLength(1);
    } finally {
      await counting.destroy();
    }
  });
});

describe('relay', () => {
  it('sends the request bytes as received to the provider URL and answers its JSON-RPC response byte for byte', async () => {
    const client = await createPaymasterClient(app, merchant);
    const answer = '{ "id" : 42,\n  "result": {"userOpHash":"0xabc"} ,"jsonrpc":"2.0" }\n';
    upstream.replyWith({ status: 200, contentType: 'application/json', body: answer });
    const request = '{"jsonrpc":"2.0",  "id":42,"method":"eth_getUserOperationByHash","params":["0xabc"]}';
    const response = await bundler({ clientId: client.clientId, body: request });
    expect(response.status).toBe(200);
    expect(response.text).toBe(answer);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const received = upstream.requests.at(-1)!;
    expect(received.body.toString('utf8')).toBe(request);
    expect(received.url).toBe(`/v2/${PATH_KEY}?apikey=${QUERY_KEY}`);
    // The caller's client id and origin are ours, not the provider's business.
    expect(received.headers['x-client-id']).toBeUndefined();
  });

  it('a JSON-RPC error from the bundler is relayed as it is, with status 200', async () => {
    const client = await createPaymasterClient(app, merchant);
    const answer = '{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"AA21 didn\'t pay prefund"}}';
    upstream.replyWith({ status: 200, contentType: 'application/json', body: answer });
    const response = await bundler({
      clientId: client.clientId,
      body: userOperationRequest('eth_sendUserOperation', sponsored),
    });
    expect(response.status).toBe(200);
    expect(response.text).toBe(answer);
  });

  it('a non-2xx answer from the bundler is 502', async () => {
    const client = await createPaymasterClient(app, merchant);
    upstream.replyWith({
      status: 503,
      contentType: 'application/json',
      body: `{"error":"overloaded for ${QUERY_KEY}"}`,
    });
    expectProxyError(
      await bundler({ clientId: client.clientId }),
      502,
      /^bundler upstream answered HTTP 503$/,
    );
  });

  it('a 2xx answer that is not JSON is 502', async () => {
    const client = await createPaymasterClient(app, merchant);
    upstream.replyWith({ status: 200, contentType: 'text/html', body: '<html>maintenance</html>' });
    expectProxyError(
      await bundler({ clientId: client.clientId }),
      502,
      /^bundler upstream answered a body that is not JSON$/,
    );
  });

  it.each([
    [
      'a closed port',
      async () => `http://127.0.0.1:${await findFreePort()}/v2/${PATH_KEY}?apikey=${QUERY_KEY}`,
      /^bundler upstream unreachable: fetch failed: connect ECONNREFUSED 127\.0\.0\.1:\d+$/,
    ],
    [
      'a URL with user info (fetch quotes it in its error)',
      async () => `http://user:${QUERY_KEY}@127.0.0.1:${await findFreePort()}/v2/${PATH_KEY}`,
      /^bundler upstream unreachable: Request cannot be constructed from a URL that includes credentials: \[redacted\]$/,
    ],
    [
      'a host that does not resolve',
      async () => `http://${PATH_KEY}-bundler.invalid/v2/${PATH_KEY}?apikey=${QUERY_KEY}`,
      /^bundler upstream unreachable: fetch failed: getaddrinfo (ENOTFOUND|EAI_AGAIN) \[redacted\]\.invalid$/,
    ],
  ])(
    'a transport failure (%s) is 502 with the transport error text, without the credential',
    async (_, upstreamUrl, message) => {
      const failing = await startTestApp({ [`BUNDLER_URL_${TESTNET.chainId}`]: await upstreamUrl() });
      try {
        const own = await signInNewMerchant(failing);
        const client = await createPaymasterClient(failing, own);
        const response = await bundler({ clientId: client.clientId, via: failing });
        expectProxyError(response, 502, message);
        expect(failing.logLines.join('\n')).not.toMatch(new RegExp(`${PATH_KEY}|${QUERY_KEY}`));
        expect(failing.logLines.some((line) => line.includes('bundler upstream failed'))).toBe(true);
      } finally {
        await failing.close();
      }
    },
  );

  it('a chain without a configured bundler is 502', async () => {
    const client = await createPaymasterClient(app, merchant, { allowedChainIds: [11155111] });
    const unconfigured = await startTestApp({ BUNDLER_URL_11155111: '' });
    try {
      expectProxyError(
        await bundler({ clientId: client.clientId, chainId: 11155111, via: unconfigured }),
        502,
        /^bundler upstream: no bundler is configured for chain 11155111$/,
      );
    } finally {
      await unconfigured.close();
    }
  });
});

describe('the provider credential', () => {
  it('appears in no response and no log line of this file', () => {
    expect(responses.length).toBeGreaterThan(20);
    for (const text of [...responses, ...app.logLines]) {
      expect(text).not.toContain(PATH_KEY);
      expect(text).not.toContain(QUERY_KEY);
    }
  });
});
