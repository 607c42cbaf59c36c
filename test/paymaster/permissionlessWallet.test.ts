import { createSmartAccountClient } from 'permissionless';
import { toSimpleSmartAccount } from 'permissionless/accounts';
import { createPimlicoClient } from 'permissionless/clients/pimlico';
import {
  type Address,
  BaseError,
  createClient,
  createPublicClient,
  defineChain,
  getAddress,
  http,
  numberToHex,
} from 'viem';
import { createPaymasterClient, formatUserOperationRequest } from 'viem/account-abstraction';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { EntryPointVersion } from '../../chain/entryPoints';
import { TestStablecoin } from '../../contracts/artifacts';
import { type TestApp, startTestApp } from '../harness/app';
import { testStack } from '../harness/stack';
import { answerJson, startApprovalReceiver, type ApprovalReceiver } from './approvalReceiver';
import { usageRows } from './paymasterApi';
import { ENTRY_POINTS, deploySimpleAccountFactory, fundedWallet } from './smartAccounts';
import {
  type LocalChain,
  type SponsoringMerchant,
  signInSponsoringMerchant,
  usdcCall,
} from './sponsoredOperations';

/**
 * Issue 43's acceptance, as a wallet developer meets our paymaster: permissionless's SimpleAccount
 * (`toSimpleSmartAccount`) and smart account client, whose paymaster is viem's ERC-7677 paymaster client
 * on our paymaster RPC and whose bundler is our bundler proxy (gas prices from permissionless's Pimlico
 * client on the same proxy), all with the paymaster client's id. Against a policy with a window, an
 * operations budget per week and an approval receiver that refuses one sender: the two approved operations
 * are included, the refused one fails in the wallet with the receiver's reason, the third approved one
 * finds the week's budget spent.
 */

const stack = testStack();
const DAY_MS = 24 * 3600 * 1000;

/** A permissionless wallet: a fresh owner's counterfactual SimpleAccount on our factory, sending through our API. */
async function permissionlessWallet(
  { app, clientId }: SponsoringMerchant,
  chain: LocalChain,
  version: EntryPointVersion,
  factoryAddress: Address,
) {
  const viemChain = defineChain({
    id: chain.chainId,
    name: `local ${chain.chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [chain.rpcUrl] } },
  });
  const publicClient = createPublicClient({ chain: viemChain, transport: http(chain.rpcUrl) });
  const entryPoint = { address: ENTRY_POINTS[version], version };
  const account = await toSimpleSmartAccount({
    client: publicClient,
    owner: privateKeyToAccount(generatePrivateKey()),
    entryPoint,
    // Our test chains deploy the eth-infinitism factory at an address of their own, not permissionless's default.
    factoryAddress,
  });
  // The client id is publishable: a wallet sends it as a header to both of our endpoints (SPEC Authentication).
  const withClientId = { fetchOptions: { headers: { 'X-Client-Id': clientId } } };
  const paymasterUrl = `${app.baseUrl}/v1/paymaster/rpc`;
  const bundlerTransport = http(`${app.baseUrl}/v1/paymaster/bundler/${chain.chainId}`, withClientId);
  const gasPrices = createPimlicoClient({ chain: viemChain, transport: bundlerTransport, entryPoint });
  const wallet = createSmartAccountClient({
    account,
    chain: viemChain,
    client: publicClient,
    bundlerTransport,
    paymaster: createPaymasterClient({ transport: http(paymasterUrl, withClientId) }),
    // No context: SPEC's merchant-sponsored gas (a `token` would ask for user-paid gas).
    userOperation: { estimateFeesPerGas: async () => (await gasPrices.getUserOperationGasPrice()).fast },
    pollingInterval: 200,
  });
  return { account, wallet, publicClient, paymasterTransport: http(paymasterUrl, withClientId), entryPoint };
}

/** The client's first policy (`Default policy`, every client has one) as `id`, after `fields` were patched onto it. */
async function patchDefaultPolicy(
  app: TestApp,
  { merchant, clientId }: SponsoringMerchant,
  fields: Record<string, unknown>,
): Promise<{ id: string }> {
  const clientRow = (await app.request('/v1/paymaster/clients', { headers: merchant.auth })).body.data.find(
    (client: { clientId: string }) => client.clientId === clientId,
  );
  const policiesPath = `/v1/paymaster/clients/${clientRow.id}/policies`;
  const [policy] = (await app.request(policiesPath, { headers: merchant.auth })).body.data;
  const patched = await app.request(`${policiesPath}/${policy.id}`, {
    method: 'PATCH',
    headers: merchant.auth,
    json: fields,
  });
  if (patched.status !== 200) throw new Error(`policy PATCH answered ${patched.status}: ${patched.text}`);
  return policy;
}

type Wallet = Awaited<ReturnType<typeof permissionlessWallet>>;

/** Mints 1000 base units of the chain's USDC to the account itself: the call the merchant allowlisted. */
const mintToSelf = ({ wallet, account }: Wallet, usdc: Address) =>
  wallet.sendUserOperation({ calls: [{ to: usdc, data: usdcCall('mint', account.address, 1_000n) }] });

/** The error a wallet call threw, with the JSON-RPC code our API answered it with. */
async function walletError(call: Promise<unknown>): Promise<{ message: string; code: number | undefined }> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof BaseError))
    throw new Error(`expected the wallet to fail with a viem error, got ${error}`);
  const withCode = error.walk((cause) => typeof (cause as { code?: unknown }).code === 'number') as {
    code: number;
  } | null;
  return { message: error.message, code: withCode?.code };
}

describe('the real-wallet test (permissionless SimpleAccount through our RPC and bundler proxy)', () => {
  let app: TestApp;
  let receiver: ApprovalReceiver;
  beforeAll(async () => {
    receiver = await startApprovalReceiver();
    app = await startTestApp();
  });
  afterAll(async () => {
    await app?.close();
    await receiver?.close();
  });

  it.each(['0.7', '0.8'] as const)(
    'EntryPoint v%s: a policy with a window, a weekly operations budget of 2 and an approval receiver that refuses one sender: 2 included on chain, 1 refused with the receiver reason, 1 refused by the budget',
    async (version) => {
      const chain = stack.chains.find((candidate) => candidate.chainId === 84532) ?? stack.chains[0]!;
      const usdc = chain.contracts.usdc! as Address;
      const sponsoring = await signInSponsoringMerchant(app, { label: `permissionless v${version}` });
      const { merchant } = sponsoring;
      const policy = await patchDefaultPolicy(app, sponsoring, {
        startsAt: new Date(Date.now() - DAY_MS).toISOString(),
        endsAt: new Date(Date.now() + DAY_MS).toISOString(),
        budgets: [{ kind: 'operations', amount: '2', period: 'week', scope: 'policy' }],
        approvalWebhook: { url: receiver.url, timeoutMs: 5000 },
      });

      const factory = await deploySimpleAccountFactory(
        await fundedWallet(chain.rpcUrl, chain.chainId),
        version,
      );
      const [first, refused, second, overBudget] = await Promise.all(
        [0, 1, 2, 3].map(() => permissionlessWallet(sponsoring, chain, version, factory)),
      );
      const refusedSender = getAddress(refused!.account.address);
      receiver.answerWith((request, response) => {
        const sender = getAddress(request.body.data.sender as string);
        answerJson(
          200,
          sender === refusedSender ? { sponsor: false, reason: 'not a customer' } : { sponsor: true },
        )(request, response);
      });
      const askedBefore = receiver.received.length;

      const included = async (wallet: Wallet) => {
        const userOpHash = await mintToSelf(wallet, usdc);
        const { success, receipt } = await wallet.wallet.waitForUserOperationReceipt({ hash: userOpHash });
        expect(success).toBe(true);
        // On chain: the receipt of the bundle, and the account (created by the operation) holds what it minted.
        const onChain = await wallet.publicClient.getTransactionReceipt({ hash: receipt.transactionHash });
        expect(onChain.status).toBe('success');
        const balance = await wallet.publicClient.readContract({
          address: usdc,
          abi: TestStablecoin.abi,
          functionName: 'balanceOf',
          args: [wallet.account.address],
        });
        expect(balance).toBe(1_000n);
      };
      await included(first!);
      const refusal = await walletError(mintToSelf(refused!, usdc));
      expect(refusal.code).toBe(-32600);
      expect(refusal.message).toContain(
        'Policy denied: paymaster_blocked_by_merchant_rule: the approval webhook of policy "Default policy" refused the operation: not a customer',
      );
      await included(second!);
      const overspend = await walletError(mintToSelf(overBudget!, usdc));
      expect(overspend.code).toBe(-32600);
      expect(overspend.message).toContain(
        'Policy denied: paymaster_rate_limit_exceeded: policy "Default policy" reached its budget of 2 operations per week',
      );

      const rows = await usageRows(app, merchant);
      // Signed rows: `submitted`, or `onchain_success` once a receipt watcher has seen the inclusion.
      const signed = rows.filter((row) => ['submitted', 'onchain_success'].includes(row.status as string));
      expect(signed.map((row) => getAddress(row.sender as string)).sort()).toEqual(
        [getAddress(first!.account.address), getAddress(second!.account.address)].sort(),
      );
      expect(signed.every((row) => row.policyId === policy.id)).toBe(true);
      expect(rows.filter((row) => String(row.status).startsWith('denied_')).map((row) => row.reason)).toEqual(
        expect.arrayContaining(['approval_refused', 'policy_budget_operations']),
      );
      // The receiver was asked for the three operations that reached signing with room in the budget, not the fourth.
      const askedFor = receiver.received
        .slice(askedBefore)
        .map((request) => getAddress(request.body.data.sender as string));
      expect(askedFor.sort()).toEqual(
        [getAddress(first!.account.address), refusedSender, getAddress(second!.account.address)].sort(),
      );
    },
  );

  it("permissionless's Pimlico-only actions leave the chain id out (Pimlico's URL names the chain, ours does not): a -32602 naming params[2]; the dry run with the chain id answers Pimlico's shape", async () => {
    const chain = stack.chains.find((candidate) => candidate.chainId === 84532) ?? stack.chains[0]!;
    const usdc = chain.contracts.usdc! as Address;
    const sponsoring = await signInSponsoringMerchant(app, { label: 'permissionless dry run' });
    const policy = await patchDefaultPolicy(app, sponsoring, {
      budgets: [{ kind: 'operations', amount: '10', period: 'week', scope: 'policy' }],
    });
    const factory = await deploySimpleAccountFactory(await fundedWallet(chain.rpcUrl, chain.chainId), '0.7');
    const wallet = await permissionlessWallet(sponsoring, chain, '0.7', factory);
    const userOperation = await wallet.wallet.prepareUserOperation({
      calls: [{ to: usdc, data: usdcCall('mint', wallet.account.address, 1_000n) }],
    });
    const pimlico = createPimlicoClient({
      transport: wallet.paymasterTransport,
      entryPoint: wallet.entryPoint,
    });
    const chainIdMissing = {
      code: -32602,
      message: expect.stringContaining('Invalid params: params[2] (chainId) must be a chain id'),
    };
    expect(
      await walletError(
        pimlico.validateSponsorshipPolicies({
          userOperation,
          sponsorshipPolicyIds: [policy.id],
        }),
      ),
    ).toEqual(chainIdMissing);
    expect(await walletError(pimlico.sponsorUserOperation({ userOperation }))).toEqual(chainIdMissing);

    // The same dry run as SPEC's params have it, from any viem client on our RPC.
    const answer = await createClient({ transport: wallet.paymasterTransport }).request({
      method: 'pm_validateSponsorshipPolicies',
      params: [
        formatUserOperationRequest(userOperation),
        wallet.entryPoint.address,
        numberToHex(chain.chainId),
        [policy.id],
      ],
    } as never);
    expect(answer).toEqual([{ sponsorshipPolicyId: policy.id, data: { name: 'Default policy' } }]);
  });
});
