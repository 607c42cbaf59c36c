import { startTestApp, type TestApp } from '../harness/app';
import { signInNewMerchant, type SignedInMerchant } from '../harness/merchants';
import { createPaymasterClient, paymasterRpc, usageRows } from './paymasterApi';

/**
 * Security review II, finding 10: a malformed call from a public client id is counted (one counter row
 * per client, hour and reason), not stored as one usage row each; every JSON-RPC answer stays as SPEC
 * "Paymaster RPC errors" has it.
 */

const SENDER = '0x4000000000000000000000000000000000000004';
const GAS = { callGasLimit: '0x30000', verificationGasLimit: '0x30000', preVerificationGas: '0x10000' };
const ENTRY_POINT = '0x0000000071727De22E5E9d8BAf0edAc6f37da032';

describe('malformed paymaster requests', () => {
  let app: TestApp;
  let merchant: SignedInMerchant;
  let clientId: string;
  let otherClientId: string;
  beforeAll(async () => {
    app = await startTestApp();
    merchant = await signInNewMerchant(app);
    clientId = (await createPaymasterClient(app, merchant, { allowedChainIds: [84532] })).clientId;
    otherClientId = (await createPaymasterClient(app, merchant, { allowedChainIds: [84532] })).clientId;
  });
  afterAll(() => app.close());

  const overview = async () => {
    const response = await app.request('/v1/merchants/me/paymaster/overview', { headers: merchant.auth });
    expect(response.status).toBe(200);
    return response.body;
  };

  it('finding 10 — malformed RPC calls from a public client id are counted per client and hour, not stored as a usage row each', async () => {
    const malformed: [unknown, number, RegExp][] = [
      ['{"jsonrpc":', -32700, /^Parse error/],
      [{ jsonrpc: '2.0', id: 1, method: 'eth_sendTransaction', params: [] }, -32601, /^Unknown method/],
      [
        { jsonrpc: '2.0', id: 1, method: 'pm_getPaymasterStubData', params: ['x'] },
        -32602,
        /^Invalid params/,
      ],
      [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'pm_getPaymasterData',
          params: [{ sender: SENDER, nonce: '0x0', callData: '0x', ...GAS }, ENTRY_POINT, 84532],
        },
        -32602,
        /^paymaster_gas_fields_missing/,
      ],
      [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'pm_getPaymasterStubData',
          params: [{ sender: SENDER, nonce: '0x0', callData: '0x' }, ENTRY_POINT, 84532, { token: 'usdc' }],
        },
        -32602,
        /^paymaster_token_invalid/,
      ],
    ];
    for (let round = 0; round < 2; round++) {
      for (const [body, code, message] of malformed) {
        const response = await paymasterRpc(app, clientId, body);
        expect(response.status).toBe(200);
        expect(response.body).toEqual({
          jsonrpc: '2.0',
          id: code === -32700 ? null : 1,
          error: { code, message: expect.stringMatching(message) },
        });
      }
    }
    // The bundler proxy's refusal of a method it does not relay is counted the same way.
    const bundler = await app.request('/v1/paymaster/bundler/84532', {
      method: 'POST',
      headers: { 'x-client-id': otherClientId },
      json: { jsonrpc: '2.0', id: 3, method: 'debug_traceCall', params: [] },
    });
    expect(bundler.body).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32601, message: expect.stringMatching(/^Method not found/) },
    });

    // No usage row for any of them; the counters hold one row per client, hour and reason.
    expect(await usageRows(app, merchant)).toEqual([]);
    const counters = await app.db
      .selectFrom('paymaster_malformed_requests')
      .select(['client_id', 'reason', 'count'])
      .where('merchant_id', '=', merchant.merchantId)
      .execute();
    const byKey = (a: unknown[], b: unknown[]) => (`${a[0]}/${a[1]}` < `${b[0]}/${b[1]}` ? -1 : 1);
    expect(counters.map((row) => [row.client_id, row.reason, Number(row.count)]).sort(byKey)).toEqual(
      [
        [clientId, 'invalid_params', 2],
        [clientId, 'paymaster_gas_fields_missing', 2],
        [clientId, 'paymaster_token_invalid', 2],
        [clientId, 'parse_error', 2],
        [clientId, 'unknown_method', 2],
        [otherClientId, 'method_not_relayed', 1],
      ].sort(byKey),
    );
    // The merchant sees them in the overview, apart from the usage rows.
    const figures = await overview();
    expect(figures.counts.total).toBe(0);
    expect(figures.malformedRequests).toEqual({
      total: 11,
      byClient: expect.arrayContaining([
        { clientId, count: 10 },
        { clientId: otherClientId, count: 1 },
      ]),
    });
  });
});
