import { encodeFunctionData, parseAbi, type Address, type Hex } from 'viem';
import { ENTRY_POINT_V07_ADDRESS } from '../../chain/entryPoints';
import { findFreePort } from '../../dev/services/freePort';
import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { startFakeSigner, type FakeSigner } from './fakeSigner';
import { allowContract, createPaymasterClient, paymasterRpc, usageRows } from './paymasterApi';

/**
 * SPEC rule 10 and the -32603 rows: after all of the API's own checks pass, the signing service's
 * -32602 / -32000 refusals reach the caller unchanged; a service that is unreachable, slow, answers
 * non-2xx or non-JSON gives paymaster_upstream_error; ERC-20 data in another mode gives
 * paymaster_mode_mismatch. Every one is a denied_upstream usage row.
 */

const TARGET: Address = '0x1000000000000000000000000000000000000001';
const SENDER: Address = '0x4000000000000000000000000000000000000004';
const TOKEN: Address = '0x6000000000000000000000000000000000000006';
const SHARED_SECRET = 'fake-signer-shared-secret-0123456789';
const SIGNER_TIMEOUT_MS = 300;

const callData: Hex = encodeFunctionData({
  abi: parseAbi(['function execute(address target, uint256 value, bytes data)']),
  functionName: 'execute',
  args: [TARGET, 0n, '0x'],
});
const userOp = {
  sender: SENDER,
  nonce: 3,
  callData,
  callGasLimit: '100000',
  verificationGasLimit: '0x30000',
  preVerificationGas: 50000,
  maxFeePerGas: '0x3b9aca00',
  maxPriorityFeePerGas: '0x1',
  signature: '0x',
};
const request = (method: string, context?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: 'req-1',
  method,
  params: context
    ? [userOp, ENTRY_POINT_V07_ADDRESS, '0x14a34', context]
    : [userOp, ENTRY_POINT_V07_ADDRESS, '0x14a34'],
});

const signedResult = (mode: 'sponsored' | 'erc20') => ({
  paymaster: '0x9999999999999999999999999999999999999999',
  paymasterData: `0x${mode === 'erc20' ? '01' : '00'}${'11'.repeat(mode === 'erc20' ? 129 : 77)}`,
  paymasterVerificationGasLimit: '0xc350',
  paymasterPostOpGasLimit: mode === 'erc20' ? '0x11170' : '0x0',
  mode,
});

describe('paymaster RPC and the signing service failing', () => {
  let signer: FakeSigner;
  let app: TestApp;
  let merchant: SignedInMerchant;
  let clientId: string;
  beforeAll(async () => {
    signer = await startFakeSigner();
    app = await startTestApp({
      SIGNER_URL: signer.url,
      SIGNER_SHARED_SECRET: SHARED_SECRET,
      SIGNER_TIMEOUT_MS: String(SIGNER_TIMEOUT_MS),
    });
    merchant = await signInNewMerchant(app);
    clientId = (await createPaymasterClient(app, merchant, { allowedChainIds: [84532], gasMode: 'both' }))
      .clientId;
    await allowContract(app, merchant, 84532, TARGET);
  });
  afterAll(async () => {
    await app.close();
    await signer.close();
  });
  beforeEach(() => {
    signer.requests.length = 0;
  });

  it('sends one signer_signPaymasterData request with the shared secret and the normalised operation', async () => {
    signer.replyWith({ kind: 'json-rpc-error', code: -32602, message: 'token not whitelisted' });
    const before = Math.floor(Date.now() / 1000);
    await paymasterRpc(app, clientId, request('pm_getPaymasterData', { token: TOKEN }));
    expect(signer.requests).toHaveLength(1);
    const [sent] = signer.requests;
    expect(sent!.path).toBe('/rpc');
    expect(sent!.headers.authorization).toBe(`Bearer ${SHARED_SECRET}`);
    expect(sent!.body).toMatchObject({
      jsonrpc: '2.0',
      method: 'signer_signPaymasterData',
      id: expect.anything(),
    });
    const [params] = sent!.body.params;
    expect(params).toEqual({
      chainId: 84532,
      entryPoint: ENTRY_POINT_V07_ADDRESS,
      entryPointVersion: '0.7',
      userOp: {
        ...userOp,
        nonce: '0x3',
        callGasLimit: '0x186a0',
        preVerificationGas: '0xc350',
      },
      mode: 'erc20',
      token: TOKEN,
      validUntil: expect.any(Number),
      validAfter: 0,
    });
    expect(params!.validUntil).toBeGreaterThanOrEqual(before + 600);
    expect(params!.validUntil).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 600);
  });

  it.each([
    ['-32602 (unsupported chain)', -32602, 'unsupported chain'],
    ['-32602 (token not whitelisted)', -32602, 'token not whitelisted'],
    ['-32000 (paymaster deposit too low)', -32000, 'paymaster deposit too low'],
  ])('a signer refusal %s is returned unchanged, HTTP 200', async (_case, code, message) => {
    signer.replyWith({ kind: 'json-rpc-error', code, message });
    const response = await paymasterRpc(app, clientId, request('pm_sponsorUserOperation'));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ jsonrpc: '2.0', id: 'req-1', error: { code, message } });
    expect((await usageRows(app, merchant))[0]).toMatchObject({
      status: 'denied_upstream',
      reason: 'signer_rejected',
      mode: 'sponsored',
      userOpHash: null,
    });
  });

  it.each([
    [
      'another JSON-RPC error (-32603)',
      { kind: 'json-rpc-error', code: -32603, message: 'Internal error: paymaster deposit unavailable' },
    ],
    ['HTTP 500', { kind: 'http', status: 500, body: '{"error":"boom"}' }],
    [
      'HTTP 401 (wrong secret)',
      {
        kind: 'http',
        status: 401,
        body: '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"unauthorized"}}',
      },
    ],
    ['a body that is not JSON', { kind: 'http', status: 200, body: '<html>gateway</html>' }],
    ['JSON that is not a JSON-RPC answer', { kind: 'http', status: 200, body: '{"ok":true}' }],
    [
      'a result with a malformed field',
      { kind: 'result', result: { ...signedResult('sponsored'), paymaster: 'nobody' } },
    ],
    ['no answer within the timeout', { kind: 'hang', ms: SIGNER_TIMEOUT_MS * 4 }],
  ] as const)('%s answers -32603 paymaster_upstream_error', async (_case, reply) => {
    signer.replyWith(reply);
    const response = await paymasterRpc(app, clientId, request('pm_getPaymasterData'));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      jsonrpc: '2.0',
      id: 'req-1',
      error: { code: -32603, message: expect.stringMatching(/^paymaster_upstream_error/) },
    });
    // The caller learns nothing of the service's internals.
    expect(response.body.error.message).not.toContain('deposit unavailable');
    expect((await usageRows(app, merchant))[0]).toMatchObject({
      status: 'denied_upstream',
      reason: 'paymaster_upstream_error',
    });
  });

  it('a token was requested and the signer returned sponsored data: -32603 paymaster_mode_mismatch', async () => {
    signer.replyWith({ kind: 'result', result: signedResult('sponsored') });
    const response = await paymasterRpc(app, clientId, request('pm_getPaymasterData', { token: TOKEN }));
    expect(response.body).toEqual({
      jsonrpc: '2.0',
      id: 'req-1',
      error: { code: -32603, message: expect.stringMatching(/^paymaster_mode_mismatch/) },
    });
    expect((await usageRows(app, merchant))[0]).toMatchObject({
      status: 'denied_upstream',
      reason: 'paymaster_mode_mismatch',
      mode: 'user_paid',
    });
  });

  it('sponsored data was requested and the signer returned ERC-20 data: also a mode mismatch', async () => {
    signer.replyWith({ kind: 'result', result: signedResult('erc20') });
    const response = await paymasterRpc(app, clientId, request('pm_getPaymasterData'));
    expect(response.body.error).toEqual({
      code: -32603,
      message: expect.stringMatching(/^paymaster_mode_mismatch/),
    });
  });

  it('stub data never calls the signer', async () => {
    signer.replyWith({ kind: 'json-rpc-error', code: -32602, message: 'must not be asked' });
    const response = await paymasterRpc(app, clientId, request('pm_getPaymasterStubData', { token: TOKEN }));
    expect(response.body.result).toBeDefined();
    expect(signer.requests).toHaveLength(0);
  });

  it('the signer is asked only after every check of the API passed', async () => {
    signer.replyWith({ kind: 'json-rpc-error', code: -32000, message: 'paymaster deposit too low' });
    const refusedByPolicy = {
      ...request('pm_getPaymasterData'),
      params: [{ ...userOp, callData: '0xdeadbeef' }, ENTRY_POINT_V07_ADDRESS, 84532],
    };
    const response = await paymasterRpc(app, clientId, refusedByPolicy);
    expect(response.body.error.message).toMatch(/^Policy denied: paymaster_target_not_allowed/);
    expect(signer.requests).toHaveLength(0);
  });

  it('an unreachable signing service answers -32603 paymaster_upstream_error', async () => {
    const closedPort = await findFreePort();
    const unreachable = await startTestApp({
      SIGNER_URL: `http://127.0.0.1:${closedPort}`,
      SIGNER_SHARED_SECRET: SHARED_SECRET,
    });
    try {
      const owner = await signInNewMerchant(unreachable);
      const client = await createPaymasterClient(unreachable, owner);
      await allowContract(unreachable, owner, 84532, TARGET);
      const response = await paymasterRpc(unreachable, client.clientId, request('pm_getPaymasterData'));
      expect(response.status).toBe(200);
      expect(response.body.error).toEqual({
        code: -32603,
        message: expect.stringMatching(/^paymaster_upstream_error/),
      });
      // Transport details (which may name hosts) stay in the log.
      expect(unreachable.logLines.some((line) => line.includes('signing service failed'))).toBe(true);
    } finally {
      await unreachable.close();
    }
  });

  it('the shared secret never reaches the log', () => {
    expect(app.logLines.some((line) => line.includes(SHARED_SECRET))).toBe(false);
  });
});
