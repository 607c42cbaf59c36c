import { receiptWorld } from './receiptWorld';
import { newAccountOn } from './smartAccounts';
import { paymasterRpcResult } from './paymasterApi';
import { sponsorOperation, usdcCall } from './sponsoredOperations';

/**
 * Issue 13's attacks that need a chain, as real user operations through our API, our bundler proxy and
 * Alto on a local chain, with this file's receipt tracker recording what was included. The API's clock
 * can be frozen (identical requests in one second) or moved on (past a validUntil).
 */

const TRACKED_CHAIN = 11155111;
let frozenAt: Date | undefined;
const world = receiptWorld('m');
const { db, chainById, sendAndWait, waitForStatusChange } = world;

let sponsor: Awaited<ReturnType<typeof world.start>>;
beforeAll(async () => {
  sponsor = await world.start({ trackedChainIds: [TRACKED_CHAIN], now: () => frozenAt ?? new Date() });
}, 120_000);
afterAll(() => world.stop());

describe('issue 13 finding 4: the same operation signed twice is charged twice', () => {
  it('a duplicate request is one usage row: included once, recorded once', async () => {
    const chain = chainById(TRACKED_CHAIN);
    const account = await newAccountOn(chain, '0.7');
    frozenAt = new Date(Math.floor(Date.now() / 1000) * 1000);
    let repeated: Record<string, string>;
    let sponsored: Awaited<ReturnType<typeof sponsorOperation>>;
    try {
      sponsored = await sponsorOperation(
        sponsor,
        chain,
        account,
        account.execute(chain.contracts.usdc!, 0n, usdcCall('mint', account.address, 7n)),
        { gasMargin: true },
      );
      repeated = await paymasterRpcResult(
        sponsor.app,
        sponsor.clientId,
        'pm_getPaymasterData',
        sponsored.signParams,
      );
    } finally {
      frozenAt = undefined;
    }
    expect(repeated.paymasterData).toBe(sponsored.operation.paymasterData);

    const inclusion = await sendAndWait(chain, '0.7', sponsored.operation);
    expect(inclusion.success).toBe(true);
    const row = await waitForStatusChange(inclusion.userOpHash, chain);
    expect(row.status).toBe('onchain_success');
    const rows = await db
      .selectFrom('paymaster_usage')
      .select(['id', 'status'])
      .where('user_op_hash', '=', inclusion.userOpHash.toLowerCase())
      .execute();
    expect(rows).toEqual([{ id: row.id, status: 'onchain_success' }]);
  });
});
