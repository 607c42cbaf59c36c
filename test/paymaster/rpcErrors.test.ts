import { Writable } from 'node:stream';
import {
  encodeAbiParameters,
  encodeFunctionData,
  parseAbi,
  parseAbiParameters,
  type Address,
  type Hex,
} from 'viem';
import { createLogger } from '../../logging/logger';
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from '../../chain/entryPoints';
import { paymasterFromContracts } from '../../chain/paymasters';
import { creditPrepaidBalance, debitPrepaidBalance } from '../../db/prepaidLedger';
import { authenticateClient } from '../../paymaster/policy/clientChecks';
import { findActivePaymasterClient } from '../../db/paymasterClients';
import { ERC7579_SINGLE_DEFAULT_MODE } from '../../paymaster/policy/decodeExecuteCall';
import { answerJsonRpcRequest } from '../../paymaster/rpc/handlePaymasterRpc';
import { createSignerClient } from '../../paymaster/rpc/signerClient';
import { STUB_SIGNATURE } from '../../paymaster/rpc/stubPaymasterData';
import { startTestApp, type TestApp } from '../harness/app';
import { localContractsAs, writeDeploymentsFile } from '../harness/deployments';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { addDenyRule, allowContract, createPaymasterClient, paymasterRpc, usageRows } from './paymasterApi';

/**
 * SPEC "Paymaster RPC errors", row by row (the rows of the later limits issue excepted: tx cap,
 * global cap, spend cap, rate limit, price unavailable), plus the signer-independent successes.
 * Signer failures are in signerErrors.test.ts.
 */

const accountAbi = parseAbi([
  'function execute(address target, uint256 value, bytes data)',
  'function executeBatch(address[] targets, uint256[] values, bytes[] datas)',
  'function executeBatch((address target, uint256 value, bytes data)[] calls)',
  'function execute(bytes32 mode, bytes executionCalldata)',
]);
const executions = parseAbiParameters('(address target, uint256 value, bytes data)[]');

const ALLOWED: Address = '0x1000000000000000000000000000000000000001';
const ALSO_ALLOWED: Address = '0x1000000000000000000000000000000000000002';
const NOT_ALLOWED: Address = '0x2000000000000000000000000000000000000002';
/** Allowlisted and also blocked by a target deny rule: the deny rule must win. */
const DENIED_TARGET: Address = '0x3000000000000000000000000000000000000003';
const SENDER: Address = '0x4000000000000000000000000000000000000004';
const DENIED_SENDER: Address = '0x5000000000000000000000000000000000000005';
const TOKEN: Address = '0x6000000000000000000000000000000000000006';
/** The delegation manager deployed on the local Base Sepolia (the deployments file names it). */
const DELEGATION_MANAGER: Address = testStack().chains.find((chain) => chain.chainId === 84532)!.contracts
  .delegationManager!;

const execute = (target: Address, value = 0n): Hex =>
  encodeFunctionData({ abi: accountAbi, functionName: 'execute', args: [target, value, '0x'] });
const executeBatch = (targets: Address[], values = targets.map(() => 0n)): Hex =>
  encodeFunctionData({
    abi: accountAbi,
    functionName: 'executeBatch',
    args: [targets, values, targets.map((): Hex => '0x')],
  });
const erc7579 = (mode: Hex, executionCalldata: Hex): Hex =>
  encodeFunctionData({ abi: accountAbi, functionName: 'execute', args: [mode, executionCalldata] });

const GAS = {
  callGasLimit: '0x30000',
  verificationGasLimit: '0x30000',
  preVerificationGas: '0x10000',
  maxFeePerGas: '0x3b9aca00',
  maxPriorityFeePerGas: '0x3b9aca00',
};
const userOp = (overrides: Record<string, unknown> = {}) => ({
  sender: SENDER,
  nonce: '0x0',
  callData: execute(ALLOWED),
  ...GAS,
  ...overrides,
});
const rpcRequest = (
  method: string,
  op: unknown = userOp(),
  {
    chainId = 84532 as unknown,
    entryPoint = ENTRY_POINT_V07_ADDRESS as unknown,
    context = undefined as unknown,
  } = {},
) => ({
  jsonrpc: '2.0',
  id: 7,
  method,
  params: context === undefined ? [op, entryPoint, chainId] : [op, entryPoint, chainId, context],
});
const stub = (op?: unknown, options?: Parameters<typeof rpcRequest>[2]) =>
  rpcRequest('pm_getPaymasterStubData', op, options);

type ClientName = 'test' | 'origins' | 'liveOnTestnet' | 'testOnMainnet' | 'userPaid' | 'both';

interface ErrorRow {
  name: string;
  client: ClientName | { clientId: string | undefined };
  headers?: Record<string, string>;
  body: unknown;
  /** HTTP status; 200 for every JSON-RPC error. */
  http: number;
  /** JSON-RPC code when http is 200. */
  code?: number;
  message: string | RegExp;
  /** Expected response id (default 7, the request's). */
  id?: string | number | null;
  /** Status of the usage row recorded for the denial (undefined: none, e.g. 401). */
  usage?: string;
  reason?: string;
  /**
   * A malformed request or an origin denial: no usage row, its client's hourly counter for this reason
   * grows by one.
   */
  counted?: string;
}

describe('paymaster RPC errors (SPEC table)', () => {
  let app: TestApp;
  let merchant: SignedInMerchant;
  const clients = {} as Record<ClientName, string>;
  beforeAll(async () => {
    const stack = testStack();
    // The local chains, plus Base mainnet carrying a copy of their contracts (so mainnet rules can be exercised).
    app = await startTestApp({
      DEPLOYMENTS_FILE: writeDeploymentsFile([...stack.chains, ...localContractsAs([8453])]),
    });
    merchant = await signInNewMerchant(app);
    const make = async (name: ClientName, body: Record<string, unknown>) => {
      clients[name] = (await createPaymasterClient(app, merchant, { label: name, ...body })).clientId;
    };
    await Promise.all([
      make('test', { allowedChainIds: [84532, 421614] }),
      make('origins', { allowedChainIds: [84532], allowedOrigins: ['https://dapp.example'] }),
      make('liveOnTestnet', { environment: 'live', allowedChainIds: [84532] }),
      make('testOnMainnet', { environment: 'test', allowedChainIds: [8453] }),
      make('userPaid', { allowedChainIds: [84532], gasMode: 'user_paid' }),
      make('both', { allowedChainIds: [84532], gasMode: 'both' }),
    ]);
    for (const target of [ALLOWED, ALSO_ALLOWED, DENIED_TARGET, DELEGATION_MANAGER])
      await allowContract(app, merchant, 84532, target);
    await addDenyRule(app, merchant, { chainId: 84532, kind: 'target', address: DENIED_TARGET });
    await addDenyRule(app, merchant, { chainId: 84532, kind: 'sender', address: DENIED_SENDER });
  });
  afterAll(() => app.close());

  const policy = (code: string) => new RegExp(`^Policy denied: ${code}`);

  const rows: ErrorRow[] = [
    // Client id and Origin: HTTP, framework body.
    {
      name: 'missing client id',
      client: { clientId: undefined },
      body: stub(),
      http: 401,
      message: /^paymaster_unauthorized/,
    },
    {
      name: 'unknown client id',
      client: { clientId: 'pmc_test_0123456789abcdef0123456789abcdef' },
      body: stub(),
      http: 401,
      message: /^paymaster_unauthorized/,
    },
    {
      name: 'malformed client id',
      client: { clientId: 'sk_live_abc' },
      body: stub(),
      http: 401,
      message: /^paymaster_unauthorized/,
    },
    {
      name: 'Origin missing while allowedOrigins is set',
      client: 'origins',
      body: stub(),
      http: 403,
      message: /^paymaster_origin_not_allowed/,
      counted: 'paymaster_origin_not_allowed',
    },
    {
      name: 'Origin not listed',
      client: 'origins',
      headers: { origin: 'https://evil.example' },
      body: stub(),
      http: 403,
      message: /^paymaster_origin_not_allowed/,
      counted: 'paymaster_origin_not_allowed',
    },
    {
      name: 'chain outside allowedChainIds (client check, before JSON-RPC)',
      client: 'test',
      body: stub(undefined, { chainId: '0x2105' }),
      http: 403,
      message: policy('paymaster_chain_not_allowed'),
      usage: 'denied_chain',
    },
    {
      name: 'unsupported chain id',
      client: 'test',
      body: stub(undefined, { chainId: 5 }),
      http: 403,
      message: policy('paymaster_chain_not_allowed'),
      usage: 'denied_chain',
    },
    // -32700, id null.
    ...(
      [
        ['a body that is not JSON', '{"jsonrpc":'],
        ['a JSON array (batch)', [stub()]],
        ["jsonrpc not '2.0'", { ...stub(), jsonrpc: '1.0' }],
        ['no id (notification)', { jsonrpc: '2.0', method: 'pm_getPaymasterStubData', params: [] }],
        ['an object id', { ...stub(), id: { n: 1 } }],
        ['a method that is not a string', { ...stub(), method: 42 }],
        ['params not an array', { ...stub(), params: { userOp: {} } }],
      ] as const
    ).map(([name, body]): ErrorRow => ({
      name,
      client: 'test',
      body,
      http: 200,
      code: -32700,
      message: /^Parse error/,
      id: null,
      counted: 'parse_error',
    })),
    // -32601.
    {
      name: 'unknown method',
      client: 'test',
      body: rpcRequest('eth_sendUserOperation'),
      http: 200,
      code: -32601,
      message: /^Unknown method/,
      counted: 'unknown_method',
    },
    // -32602 Invalid params.
    ...(
      [
        ['params[0] not an object', stub('0x')],
        ['params[1] not a 0x string', stub(undefined, { entryPoint: 7 })],
        ['params[2] not a chain id', stub(undefined, { chainId: 'base' })],
        ['nonce not readable as integer', stub(userOp({ nonce: 'first' }))],
        ['a gas field not readable as integer', stub(userOp({ callGasLimit: '-5' }))],
        ['sender not an address', stub(userOp({ sender: '0xabc' }))],
      ] as const
    ).map(([name, body]): ErrorRow => ({
      name,
      client: 'test',
      body,
      http: 200,
      code: -32602,
      message: /^Invalid params/,
      counted: 'invalid_params',
    })),
    // Chain and key class.
    {
      name: 'live key on a testnet',
      client: 'liveOnTestnet',
      body: stub(),
      http: 200,
      code: -32602,
      message: policy('paymaster_key_network_class_mismatch'),
      usage: 'denied_chain',
    },
    {
      name: 'test key on a mainnet',
      client: 'testOnMainnet',
      body: stub(undefined, { chainId: 8453 }),
      http: 200,
      code: -32602,
      message: policy('paymaster_key_network_class_mismatch'),
      usage: 'denied_chain',
    },
    // Entry point.
    {
      name: 'entry point neither v0.8 nor v0.7',
      client: 'test',
      body: stub(undefined, { entryPoint: '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789' }),
      http: 200,
      code: -32602,
      message: policy('paymaster_entrypoint_not_supported'),
      usage: 'denied_entrypoint',
    },
    // Gas fields.
    ...(['pm_getPaymasterData', 'pm_sponsorUserOperation'] as const).flatMap((method) =>
      (['callGasLimit', 'verificationGasLimit', 'preVerificationGas', 'maxFeePerGas'] as const).map(
        (field): ErrorRow => ({
          name: `${method} without ${field}`,
          client: 'test',
          body: rpcRequest(method, userOp({ [field]: undefined })),
          http: 200,
          code: -32602,
          message: new RegExp(`^paymaster_gas_fields_missing: .*missing ${field}`),
          counted: 'paymaster_gas_fields_missing',
        }),
      ),
    ),
    // Token.
    {
      name: 'context.token not an address',
      client: 'both',
      body: stub(undefined, { context: { token: 'USDC' } }),
      http: 200,
      code: -32602,
      message: /^paymaster_token_invalid/,
      counted: 'paymaster_token_invalid',
    },
    {
      name: 'context.token the zero address',
      client: 'both',
      body: stub(undefined, { context: { token: `0x${'0'.repeat(40)}` } }),
      http: 200,
      code: -32602,
      message: /^paymaster_token_invalid/,
      counted: 'paymaster_token_invalid',
    },
    {
      name: 'context.token with pm_sponsorUserOperation',
      client: 'both',
      body: rpcRequest('pm_sponsorUserOperation', userOp(), { context: { token: TOKEN } }),
      http: 200,
      code: -32602,
      message: /^paymaster_token_unsupported_method/,
      counted: 'paymaster_token_unsupported_method',
    },
    // Gas mode.
    {
      name: 'a token on a sponsored-only client',
      client: 'test',
      body: stub(undefined, { context: { token: TOKEN } }),
      http: 200,
      code: -32600,
      message: policy('paymaster_gas_mode_not_allowed'),
      usage: 'denied_gas_mode',
    },
    {
      name: 'no token on a user_paid client',
      client: 'userPaid',
      body: stub(),
      http: 200,
      code: -32600,
      message: policy('paymaster_gas_mode_not_allowed'),
      usage: 'denied_gas_mode',
    },
    // Deny rules, before the allowlist.
    {
      name: 'a blocked sender',
      client: 'test',
      body: stub(userOp({ sender: DENIED_SENDER })),
      http: 200,
      code: -32600,
      message: policy('paymaster_blocked_by_merchant_rule: sender'),
      usage: 'denied_merchant_rule',
      reason: 'sender_denied',
    },
    {
      name: 'a blocked target (allowlisted too)',
      client: 'test',
      body: stub(userOp({ callData: execute(DENIED_TARGET) })),
      http: 200,
      code: -32600,
      message: policy('paymaster_blocked_by_merchant_rule: call 0'),
      usage: 'denied_merchant_rule',
      reason: 'target_denied',
    },
    {
      name: 'a blocked target at index 2 of a batch whose call 1 is not allowlisted',
      client: 'test',
      body: stub(userOp({ callData: executeBatch([ALLOWED, NOT_ALLOWED, DENIED_TARGET]) })),
      http: 200,
      code: -32600,
      message: policy('paymaster_blocked_by_merchant_rule: call 2'),
      usage: 'denied_merchant_rule',
    },
    {
      name: 'a blocked sender with undecodable callData (deny rules first)',
      client: 'test',
      body: stub(userOp({ sender: DENIED_SENDER, callData: '0xdeadbeef' })),
      http: 200,
      code: -32600,
      message: policy('paymaster_blocked_by_merchant_rule'),
      usage: 'denied_merchant_rule',
    },
    // callData decoding and allowlist.
    {
      name: 'a target not on the allowlist',
      client: 'test',
      body: stub(userOp({ callData: execute(NOT_ALLOWED) })),
      http: 200,
      code: -32602,
      message: policy('paymaster_target_not_allowed: call 0'),
      usage: 'denied_target',
      reason: 'target_not_allowlisted',
    },
    {
      name: 'a target allowlisted on another chain only',
      client: 'test',
      body: stub(undefined, { chainId: 421614 }),
      http: 200,
      code: -32602,
      message: policy('paymaster_target_not_allowed: call 0'),
      usage: 'denied_target',
    },
    {
      name: 'one unlisted call refuses the whole batch, named by index',
      client: 'test',
      body: stub(userOp({ callData: executeBatch([ALLOWED, ALSO_ALLOWED, NOT_ALLOWED]) })),
      http: 200,
      code: -32602,
      message: policy('paymaster_target_not_allowed: call 2'),
      usage: 'denied_target',
    },
    {
      name: 'undecodable callData',
      client: 'test',
      body: stub(userOp({ callData: '0xdeadbeef' })),
      http: 200,
      code: -32602,
      message: policy('paymaster_target_not_allowed'),
      usage: 'denied_target',
      reason: 'undecodable_calldata',
    },
    {
      name: 'empty callData',
      client: 'test',
      body: stub(userOp({ callData: '0x' })),
      http: 200,
      code: -32602,
      message: policy('paymaster_target_not_allowed'),
      usage: 'denied_target',
      reason: 'undecodable_calldata',
    },
    {
      name: 'a batch call with native value',
      client: 'test',
      body: stub(userOp({ callData: executeBatch([ALLOWED, ALSO_ALLOWED], [0n, 1n]) })),
      http: 200,
      code: -32602,
      message: policy('paymaster_target_not_allowed: call 1'),
      usage: 'denied_target',
      reason: 'batch_call_value',
    },
    {
      name: 'a batch call to the delegation manager',
      client: 'test',
      body: stub(userOp({ callData: executeBatch([ALLOWED, DELEGATION_MANAGER]) })),
      http: 200,
      code: -32602,
      message: policy('paymaster_target_not_allowed: call 1: a batch must not contain a delegated transfer'),
      usage: 'denied_target',
      reason: 'delegated_batch',
    },
    {
      name: 'an empty value array',
      client: 'test',
      body: stub(userOp({ callData: executeBatch([ALLOWED], []) })),
      http: 200,
      code: -32602,
      message: policy('paymaster_target_not_allowed'),
      usage: 'denied_target',
      reason: 'batch_length_mismatch',
    },
    {
      name: 'ERC-7579 try mode',
      client: 'test',
      body: stub(
        userOp({
          callData: erc7579(
            `0x0101${'00'.repeat(30)}`,
            encodeAbiParameters(executions, [[{ target: ALLOWED, value: 0n, data: '0x' }]]),
          ),
        }),
      ),
      http: 200,
      code: -32602,
      message: policy('paymaster_target_not_allowed'),
      usage: 'denied_target',
      reason: 'unsupported_execution_mode',
    },
    {
      name: 'ERC-7579 SingleDefault to the delegation manager with call data that is no redemption',
      client: 'test',
      body: stub(
        userOp({ callData: erc7579(ERC7579_SINGLE_DEFAULT_MODE, `${DELEGATION_MANAGER}${'00'.repeat(32)}`) }),
      ),
      http: 200,
      code: -32602,
      message: policy(
        'paymaster_target_not_allowed: delegated transfer: the call to the delegation manager cannot be decoded',
      ),
      usage: 'denied_target',
      reason: 'delegation_undecodable',
    },
    {
      name: "SimpleAccount v0.8's executeBatch((address,uint256,bytes)[])",
      client: 'test',
      body: stub(
        userOp({
          callData: encodeFunctionData({
            abi: accountAbi,
            functionName: 'executeBatch',
            args: [[{ target: ALLOWED, value: 0n, data: '0x' }]],
          }),
        }),
      ),
      http: 200,
      code: -32602,
      message: policy('paymaster_target_not_allowed'),
      usage: 'denied_target',
      reason: 'unsupported_execution',
    },
  ];

  const malformedCount = async (clientId: string | undefined, reason: string): Promise<number> => {
    const row = await app.db
      .selectFrom('paymaster_malformed_requests')
      .select((eb) => eb.fn.sum<string>('count').as('count'))
      .where('client_id', '=', clientId ?? '')
      .where('reason', '=', reason)
      .executeTakeFirst();
    return Number(row?.count ?? 0);
  };

  it.each(rows.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
    const clientId = typeof row.client === 'string' ? clients[row.client] : row.client.clientId;
    const before = (await usageRows(app, merchant)).length;
    const countedBefore = row.counted === undefined ? 0 : await malformedCount(clientId, row.counted);
    const response = await paymasterRpc(app, clientId, row.body, row.headers);

    expect(response.status).toBe(row.http);
    if (row.http === 200) {
      expect(response.body).toEqual({
        jsonrpc: '2.0',
        id: row.id === undefined ? 7 : row.id,
        error: { code: row.code, message: expect.stringMatching(row.message) },
      });
    } else {
      expect(response.body).toEqual({
        statusCode: row.http,
        message: expect.stringMatching(row.message),
        error: expect.any(String),
      });
    }

    const rows = await usageRows(app, merchant);
    if (row.usage === undefined) {
      expect(rows).toHaveLength(before);
      if (row.counted !== undefined)
        expect(await malformedCount(clientId, row.counted)).toBe(countedBefore + 1);
      return;
    }
    expect(rows).toHaveLength(before + 1);
    expect(rows[0]).toMatchObject({
      clientId,
      status: row.usage,
      userOpHash: null,
      ...(row.reason && { reason: row.reason }),
    });
  });

  it('records what it learned before refusing: chain, mode, sender, entry point and every decoded target in order', async () => {
    await paymasterRpc(
      app,
      clients.test,
      stub(userOp({ callData: executeBatch([ALLOWED, ALSO_ALLOWED, NOT_ALLOWED]) }), {
        entryPoint: ENTRY_POINT_V08_ADDRESS,
      }),
    );
    const [row] = await usageRows(app, merchant);
    expect(row).toMatchObject({
      method: 'pm_getPaymasterStubData',
      chainId: 84532,
      mode: 'sponsored',
      status: 'denied_target',
      sender: SENDER,
      entryPoint: ENTRY_POINT_V08_ADDRESS,
      targets: [ALLOWED, ALSO_ALLOWED, NOT_ALLOWED],
    });
  });

  it('the JSON-RPC stage re-checks the chain: -32602 Policy denied: paymaster_chain_not_allowed', async () => {
    const silent = createLogger(
      { level: 'silent' },
      new Writable({ write: (_chunk, _encoding, done) => done() }),
    );
    const authenticated = await authenticateClient(
      (id) => findActivePaymasterClient(app.db, id),
      clients.test,
    );
    if (!authenticated.ok) throw new Error('the test client must authenticate');
    const response = await answerJsonRpcRequest(
      {
        db: app.db,
        signer: createSignerClient({ url: undefined, sharedSecret: undefined }),
        paymasterFor: () => undefined,
        delegationManagerFor: () => DELEGATION_MANAGER,
        caveatEnforcersFor: () => undefined,
        publicClientFor: () => undefined,
        now: () => new Date(),
        logger: silent,
      },
      { client: authenticated.client, body: stub(undefined, { chainId: 8453 }) },
    );
    expect(response).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32602, message: expect.stringMatching(policy('paymaster_chain_not_allowed')) },
    });
    expect((await usageRows(app, merchant))[0]).toMatchObject({ status: 'denied_chain', chainId: 8453 });
  });

  describe('successes that need no signer', () => {
    const local = () => testStack().chains.find((chain) => chain.chainId === 84532)!;

    it.each([
      ['v0.7', ENTRY_POINT_V07_ADDRESS, '0.7'],
      ['v0.8', ENTRY_POINT_V08_ADDRESS, '0.8'],
    ] as const)(
      "stub data for EntryPoint %s names that release's paymaster, carries the placeholder signature and records nothing",
      async (_label, entryPoint, version) => {
        const before = (await usageRows(app, merchant)).length;
        const response = await paymasterRpc(
          app,
          clients.test,
          stub(userOp({ callData: executeBatch([ALLOWED, ALSO_ALLOWED]) }), { entryPoint }),
        );
        expect(response.status).toBe(200);
        expect(response.body).toEqual({
          jsonrpc: '2.0',
          id: 7,
          result: {
            paymaster: paymasterFromContracts(local().contracts, version),
            paymasterData: expect.stringMatching(new RegExp(`^0x00[0-9a-f]{24}${STUB_SIGNATURE.slice(2)}$`)),
            paymasterVerificationGasLimit: expect.stringMatching(/^0x[0-9a-f]+$/),
            paymasterPostOpGasLimit: expect.stringMatching(/^0x[0-9a-f]+$/),
          },
        });
        expect(await usageRows(app, merchant)).toHaveLength(before);
      },
    );

    it('stub data needs no gas fields, and a user_paid client gets ERC-20 mode data naming its token', async () => {
      const response = await paymasterRpc(
        app,
        clients.userPaid,
        stub({ sender: SENDER, nonce: 1, callData: execute(ALLOWED) }, { context: { token: TOKEN } }),
      );
      expect(response.body.result.paymasterData).toMatch(
        new RegExp(`^0x01[0-9a-f]{24}${TOKEN.slice(2).toLowerCase()}[0-9a-f]{64}${STUB_SIGNATURE.slice(2)}$`),
      );
    });

    it('accepts a decimal-string chain id and an upper-case entry point', async () => {
      const response = await paymasterRpc(
        app,
        clients.test,
        stub(undefined, {
          chainId: '84532',
          entryPoint: ENTRY_POINT_V07_ADDRESS.toUpperCase().replace('0X', '0x'),
        }),
      );
      expect(response.body.result).toBeDefined();
    });
  });

  describe('prepaid balance (sponsored operations on mainnets)', () => {
    let billed: SignedInMerchant;
    let live: string;
    beforeAll(async () => {
      billed = await signInNewMerchant(app);
      live = (
        await createPaymasterClient(app, billed, {
          environment: 'live',
          allowedChainIds: [8453],
          gasMode: 'both',
        })
      ).clientId;
      await allowContract(app, billed, 8453, ALLOWED);
    });

    it('answers -32600 Policy denied: paymaster_billing_balance_exhausted without a balance, records denied_billing_balance', async () => {
      const response = await paymasterRpc(app, live, stub(undefined, { chainId: 8453 }));
      expect(response.status).toBe(200);
      expect(response.body.error).toEqual({
        code: -32600,
        message: expect.stringMatching(policy('paymaster_billing_balance_exhausted')),
      });
      expect((await usageRows(app, billed))[0]).toMatchObject({
        status: 'denied_billing_balance',
        chainId: 8453,
        mode: 'sponsored',
      });
    });

    it('user-paid gas on a mainnet needs no prepaid balance', async () => {
      const response = await paymasterRpc(
        app,
        live,
        stub(undefined, { chainId: 8453, context: { token: TOKEN } }),
      );
      expect(response.body.result).toBeDefined();
    });

    it('a positive balance opens the gate; a balance spent back to zero closes it', async () => {
      await creditPrepaidBalance(app.db, {
        merchantId: billed.merchantId,
        amountUsd: '5.25',
        description: 'test top-up',
      });
      expect((await paymasterRpc(app, live, stub(undefined, { chainId: 8453 }))).body.result).toBeDefined();
      await debitPrepaidBalance(app.db, {
        merchantId: billed.merchantId,
        amountUsd: '5.25',
        description: 'test gas charge',
      });
      expect((await paymasterRpc(app, live, stub(undefined, { chainId: 8453 }))).body.error.message).toMatch(
        policy('paymaster_billing_balance_exhausted'),
      );
    });

    it("the balance is the merchant's own: another merchant's credit does not open the gate", async () => {
      await creditPrepaidBalance(app.db, {
        merchantId: merchant.merchantId,
        amountUsd: '100',
        description: 'someone else',
      });
      expect((await paymasterRpc(app, live, stub(undefined, { chainId: 8453 }))).body.error.message).toMatch(
        policy('paymaster_billing_balance_exhausted'),
      );
    });
  });
});
