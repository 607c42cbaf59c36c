import type { Address } from 'viem';
import { type TestApp, startTestApp } from '../harness/app';
import type { SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { paymasterRpc } from './paymasterApi';
import { merchantSponsoringTarget, signedDataRequest } from './signedDataRequests';

/**
 * Issue 13, finding 7 (API side): an operation's gas limits and fees are bounded before it is priced, so
 * a cost beyond what the limit counters (bigint) can hold is a policy refusal with a usage row, never an
 * "Internal error" without one.
 */

const CHAIN_ID = 84532;
const UINT128_MAX = `0x${'f'.repeat(32)}`;

const request = (sender: Address, fields: Record<string, string>, context?: { token: string }) =>
  signedDataRequest({ sender, chainId: CHAIN_ID, fields, ...(context && { context }) });

let app: TestApp;
let merchant: SignedInMerchant;
let clientId: string;
beforeAll(async () => {
  app = await startTestApp({ LOG_LEVEL: 'warn' });
  ({ merchant, clientId } = await merchantSponsoringTarget(app, CHAIN_ID, { gasMode: 'both' }));
});
afterAll(() => app.close());

const rowsOf = (sender: Address) =>
  app.db
    .selectFrom('paymaster_usage')
    .select(['status', 'reason'])
    .where('merchant_id', '=', merchant.merchantId)
    .where('sender', '=', sender.toLowerCase())
    .execute();

describe('issue 13 finding 7: overflow edge cases', () => {
  it('gas limits whose cost leaves the int8 range answer a policy refusal and record it, not "Internal error"', async () => {
    const sender: Address = '0x7000000000000000000000000000000000000001';
    const response = await paymasterRpc(
      app,
      clientId,
      request(sender, { callGasLimit: UINT128_MAX, verificationGasLimit: UINT128_MAX }),
    );
    expect(response.body.error).toEqual({
      code: -32602,
      message: expect.stringMatching(
        /^Policy denied: paymaster_gas_limit_too_high: the operation's gas limits add up to \d+, above the limit of 15000000$/,
      ),
    });
    expect(await rowsOf(sender)).toEqual([{ status: 'denied_malformed', reason: 'gas_limit_too_high' }]);
  });

  it('a fee at the top of uint128 is refused the same way', async () => {
    const sender: Address = '0x7000000000000000000000000000000000000002';
    const response = await paymasterRpc(
      app,
      clientId,
      request(sender, { maxFeePerGas: UINT128_MAX, maxPriorityFeePerGas: UINT128_MAX }),
    );
    expect(response.body.error.message).toMatch(/^Policy denied: paymaster_gas_price_too_high: /);
    expect(await rowsOf(sender)).toEqual([{ status: 'denied_malformed', reason: 'gas_price_too_high' }]);
  });
});

describe('issue 13 finding 1: the ERC-20 (user_paid) mode drains the deposit (the API bounds its cost)', () => {
  it('user_paid operations get the same gas and fee bounds: the deposit pays their gas before the token does', async () => {
    const token = Object.keys(testStack().signer.erc20Tokens[String(CHAIN_ID)]!)[0]!;
    const gasHeavy: Address = '0x7000000000000000000000000000000000000003';
    const tooMuchGas = await paymasterRpc(
      app,
      clientId,
      request(gasHeavy, { callGasLimit: '0x1000000' }, { token }),
    );
    expect(tooMuchGas.body.error.message).toMatch(/^Policy denied: paymaster_gas_limit_too_high: /);
    const feeHeavy: Address = '0x7000000000000000000000000000000000000004';
    const tooMuchFee = await paymasterRpc(
      app,
      clientId,
      request(feeHeavy, { maxFeePerGas: '0x174876e800', maxPriorityFeePerGas: '0x174876e800' }, { token }),
    );
    expect(tooMuchFee.body.error.message).toMatch(/^Policy denied: paymaster_gas_price_too_high: /);
    expect(await rowsOf(gasHeavy)).toEqual([{ status: 'denied_malformed', reason: 'gas_limit_too_high' }]);
    expect(await rowsOf(feeHeavy)).toEqual([{ status: 'denied_malformed', reason: 'gas_price_too_high' }]);
  });
});
