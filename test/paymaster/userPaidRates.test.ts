import { recoverMessageAddress, type Address, type Hex } from 'viem';
import { deployContract, getBlock, waitForTransactionReceipt, writeContract } from 'viem/actions';
import { decodePaymasterData, sponsorshipHash } from '../../chain/paymasterData';
import { LocalPriceFeed } from '../../contracts/artifacts';
import { startTestApp, type TestApp } from '../harness/app';
import type { SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { paymasterRpc } from './paymasterApi';
import { fundedWallet } from './smartAccounts';
import { merchantSponsoringTarget, signedDataRequest, targetCallData } from './signedDataRequests';

/**
 * Issue 26, finding 8: a user-paid (ERC-20) operation's exchange rate is priced when it is signed, from
 * the same price source as every sponsorship limit (the chain's ETH/USD feed) over the stablecoin's USD
 * price (its feed, else its 1 USD peg), plus PAYMASTER_TOKEN_RATE_MARGIN_BPS, and the most it can cost
 * its sender is held to the client's per-operation dollar cap. The run's real signing service signs the
 * rate (it is inside its band around SIGNER_ERC20_TOKENS' 3,000 per ether).
 *
 * The request is the fixed-gas operation of signedDataRequests.ts with the ERC-20 paymaster floors
 * (120,000 verification, 70,000 postOp): 648,752 gas × 2 gwei = 1,297,504,000,000,000 wei at most.
 */

const CHAIN_ID = 84532;
const MARGIN_BPS = 500;
/** 0.998 USD with the feeds' 8 decimals: USDC a little under its peg. */
const USDC_USD_ANSWER = 99_800_000n;
const ethUsd = (usd: bigint) => usd * 10n ** 8n;

const chain = () => testStack().chains.find((entry) => entry.chainId === CHAIN_ID)!;
const usdc = () => chain().contracts.usdc! as Address;
const usdt = () => chain().contracts.usdt! as Address;

let wallet: Awaited<ReturnType<typeof fundedWallet>>;
let app: TestApp;
let merchant: SignedInMerchant;
let clientId: string;
let clientRowId: string;
let ethFeed: Address;
let usdcFeed: Address;
let nonce = 0;

/** A settable Chainlink-style feed of this file's own (the shared one stays at 3,000 for every other test). */
async function deployFeed(answer: bigint): Promise<Address> {
  const hash = await deployContract(wallet, {
    abi: LocalPriceFeed.abi,
    bytecode: LocalPriceFeed.bytecode,
    args: [wallet.account.address, answer],
  });
  const { contractAddress } = await waitForTransactionReceipt(wallet, { hash });
  return contractAddress!;
}

/** Sets a feed's answer; `ageSec` pins its updatedAt that far behind the chain (0: as fresh as each block). */
async function setFeed(feed: Address, answer: bigint, ageSec = 0n): Promise<void> {
  const { timestamp } = await getBlock(wallet, { blockTag: 'latest' });
  const hash = await writeContract(wallet, {
    address: feed,
    abi: LocalPriceFeed.abi,
    functionName: 'setRoundData',
    args: [answer, ageSec === 0n ? 0n : timestamp - ageSec],
    chain: wallet.chain,
    account: wallet.account,
  });
  await waitForTransactionReceipt(wallet, { hash });
  // A price read is reused for a second (paymaster/pricing/prices.ts PRICE_REUSE_MS).
  await new Promise((resolve) => setTimeout(resolve, 1_100));
}

const SENDER: Address = '0x5200000000000000000000000000000000000008';

const userPaid = (token: Address) =>
  paymasterRpc(
    app,
    clientId,
    signedDataRequest({ id: ++nonce, sender: SENDER, nonce, chainId: CHAIN_ID, context: { token } }),
  );

const patchClient = (json: Record<string, unknown>) =>
  app.request(`/v1/paymaster/clients/${clientRowId}`, { method: 'PATCH', headers: merchant.auth, json });

async function latestUsageRow() {
  return app.db
    .selectFrom('paymaster_usage')
    .selectAll()
    .where('merchant_id', '=', merchant.merchantId)
    .orderBy('seq', 'desc')
    .executeTakeFirstOrThrow();
}

beforeAll(async () => {
  wallet = await fundedWallet(chain().rpcUrl, CHAIN_ID);
  ethFeed = await deployFeed(ethUsd(2_000n));
  usdcFeed = await deployFeed(USDC_USD_ANSWER);
  app = await startTestApp({
    LOG_LEVEL: 'warn',
    [`PAYMASTER_PRICE_FEED_${CHAIN_ID}`]: ethFeed,
    PAYMASTER_TOKEN_USD_FEEDS: JSON.stringify({ [CHAIN_ID]: { [usdc()]: usdcFeed } }),
    PAYMASTER_TOKEN_RATE_MARGIN_BPS: String(MARGIN_BPS),
  });
  ({ merchant, clientId } = await merchantSponsoringTarget(app, CHAIN_ID, { gasMode: 'user_paid' }));
  const clients = await app.request('/v1/paymaster/clients', { headers: merchant.auth });
  clientRowId = clients.body.data.find((client: { clientId: string }) => client.clientId === clientId).id;
});
afterAll(() => app?.close());

describe('finding 8: ERC-20 gas rates follow the price source', () => {
  it('finding 8: ERC-20 gas rates follow the price source (ETH/USD over the stablecoin’s USD price, plus the configured margin), not a constant in config', async () => {
    // 2,000 / 0.998 USD per ether × 10^6 base units × 1.05 = 2,104,208,416.8 → rounded up.
    const first = await userPaid(usdc());
    expect(first.body.error).toBeUndefined();
    const signed = decodePaymasterData(first.body.result.paymasterData as Hex)!;
    expect(signed).toMatchObject({ mode: 'erc20', token: usdc(), exchangeRate: 2_104_208_417n });
    // The signing service signed that very rate (the contract checks this hash).
    const hash = sponsorshipHash({
      userOperation: {
        sender: SENDER,
        nonce: BigInt(nonce),
        callData: targetCallData,
        callGasLimit: 0x30000n,
        verificationGasLimit: 0x30000n,
        preVerificationGas: 0x10000n,
        maxFeePerGas: 0x77359400n,
        maxPriorityFeePerGas: 0x3b9aca00n,
        paymasterVerificationGasLimit: BigInt(first.body.result.paymasterVerificationGasLimit),
        paymasterPostOpGasLimit: BigInt(first.body.result.paymasterPostOpGasLimit),
      },
      chainId: CHAIN_ID,
      paymaster: first.body.result.paymaster,
      terms: signed as Parameters<typeof sponsorshipHash>[0]['terms'],
    });
    expect(await recoverMessageAddress({ message: { raw: hash }, signature: signed.signature })).toBe(
      testStack().signer.address,
    );
    expect(await latestUsageRow()).toMatchObject({
      status: 'submitted',
      mode: 'user_paid',
      eth_usd_price: '2000.00000000',
      estimated_gas_cost_wei: '1297504000000000',
    });

    // ETH moves to 2,500 USD: the next operation's rate follows, no configuration change.
    await setFeed(ethFeed, ethUsd(2_500n));
    const moved = decodePaymasterData((await userPaid(usdc())).body.result.paymasterData as Hex);
    expect(moved).toMatchObject({ exchangeRate: 2_630_260_522n });

    // USDT has no feed configured: valued at its 1 USD peg, 2,500 × 10^6 × 1.05.
    const pegged = decodePaymasterData((await userPaid(usdt())).body.result.paymasterData as Hex);
    expect(pegged).toMatchObject({ mode: 'erc20', token: usdt(), exchangeRate: 2_625_000_000n });
  });

  it("a client's per-operation dollar cap refuses a user-paid operation that could cost its sender more; PATCH sets it and null restores the default", async () => {
    await setFeed(ethFeed, ethUsd(2_500n));
    // At most ceil(1,297,504,000,000,000 × 2,630,260,522 / 1e18) = 3,412,774 base units = 3.405949 USD at 0.998.
    const tight = await patchClient({ userPaidMaxOperationUsd: '3.4' });
    expect(tight.status).toBe(200);
    expect(tight.body.userPaidMaxOperationUsd).toBe('3.4');
    const refused = await userPaid(usdc());
    expect(refused.body.error).toEqual({
      code: -32600,
      message: `Policy denied: paymaster_merchant_tx_cap_exceeded: the operation can cost its sender up to 3.405949 USD in token ${usdc()}, above the per-operation cap of 3.4 USD for user-paid gas (merchant-configured cap)`,
    });
    expect(await latestUsageRow()).toMatchObject({ status: 'denied_merchant_limit', mode: 'user_paid' });

    expect((await patchClient({ userPaidMaxOperationUsd: '3.5' })).status).toBe(200);
    expect((await userPaid(usdc())).body.result).toBeDefined();

    const cleared = await patchClient({ userPaidMaxOperationUsd: null });
    expect(cleared.body.userPaidMaxOperationUsd).toBeNull();
    // The platform default (PAYMASTER_USER_PAID_MAX_OPERATION_USD, 50 USD) then applies.
    expect((await userPaid(usdc())).body.result).toBeDefined();
    expect((await patchClient({ userPaidMaxOperationUsd: '0' })).status).toBe(400);
  });

  it('a stale stablecoin feed refuses signed user-paid data (price unavailable), and nothing is signed at a fixed rate', async () => {
    await setFeed(usdcFeed, USDC_USD_ANSWER, 4_000n);
    const refused = await userPaid(usdc());
    expect(refused.body.error).toEqual({
      code: -32600,
      message: `Policy denied: paymaster_price_unavailable: no fresh USD price of token ${usdc()} on chain ${CHAIN_ID}; retry`,
    });
    expect(await latestUsageRow()).toMatchObject({ status: 'denied_price_unavailable', mode: 'user_paid' });
    await setFeed(usdcFeed, USDC_USD_ANSWER);
    expect((await userPaid(usdc())).body.result).toBeDefined();
  });
});
