import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { getAddress, numberToHex, parseEther, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ROOT_AUTHORITY, encodePermissionContext } from '../../chain/delegations';
import { periodTransferCaveat } from '../../chain/periodicTransfers';
import { findSubscriptionById } from '../../db/subscriptions';
import { launchChromium } from '../checkout/chromium';
import { seriousAccessibilityViolations } from '../dashboard/browser';
import { frameworkOn, signDelegation, usdcBalance, type LocalChain } from '../delegation/delegatorAccounts';
import { publicClientFor, rpc } from '../paymaster/smartAccounts';
import { startSettlementStack, type SettlementStack } from '../settlement/settlementStack';
import { TOKENS, newCustomer, type Customer } from './subscriberWorld';

/**
 * The subscribe page `/subscribe/<planId>` in real chromium (issue 42 acceptance): the plan and, before any
 * wallet prompt, what the customer allows in words; an injected EIP-1193 wallet that implements ERC-7715
 * `wallet_grantPermissions` over a local DeleGator account (it builds the delegation with the
 * ERC20PeriodTransferEnforcer caveat and signs it with the account's owner key); a permission for less than
 * the plan refused in place with the service's sentence; the exact one subscribes, and the project's own
 * workers charge the first period through to its session completing. A wallet without ERC-7715 over a
 * DeleGator signs the same delegation as EIP-712 typed data. The customer cancels from the manage link.
 * The checkout page's CSP throughout: no violation, no script error; axe-core finds nothing serious.
 */

const ETHEREUM_SEPOLIA = 11155111;
const CONFIRMATIONS = 3;
const AMOUNT = 10n * TOKENS;
const PHONE = { width: 375, height: 812 };
const DESKTOP = { width: 1280, height: 800 };
const SCREENSHOTS = join(__dirname, '..', '..', 'test-output', 'subscriptions');

interface WalletCall {
  method: string;
  params?: unknown;
}
type WalletAnswer = { result: unknown } | { error: { code: number; message: string } };

describe('subscribe page in chromium', () => {
  let stack: SettlementStack;
  let browser: Browser;
  let chain: LocalChain;
  const executorKey = generatePrivateKey();
  const executor = privateKeyToAccount(executorKey).address;

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    [stack, browser] = await Promise.all([
      startSettlementStack({
        chainIds: [ETHEREUM_SEPOLIA],
        env: { SUBSCRIPTION_EXECUTOR_ADDRESS: executor },
        subscriptionExecutorKey: executorKey,
      }),
      launchChromium(),
    ]);
    await rpc(stack.rpcUrls[ETHEREUM_SEPOLIA]!, 'anvil_setBalance', [
      executor,
      numberToHex(parseEther('10')),
    ]);
    chain = {
      chainId: ETHEREUM_SEPOLIA,
      rpcUrl: stack.rpcUrls[ETHEREUM_SEPOLIA]!,
      contracts: stack.contracts(ETHEREUM_SEPOLIA),
    } as unknown as LocalChain;
    await stack.db
      .updateTable('merchants')
      .set({ name: 'Tea <Club>' })
      .where('id', '=', stack.merchant.merchantId)
      .execute();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, ms = 120_000) {
    const deadline = Date.now() + ms;
    let last = await read();
    while (!done(last)) {
      if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(last)} after ${ms} ms`);
      await sleep(250);
      last = await read();
    }
    return last;
  }

  async function newPlan(json: Record<string, unknown> = {}): Promise<string> {
    const plan = await stack.app.request('/v1/plans', {
      method: 'POST',
      headers: stack.sk,
      json: { name: 'Leaf of the month', amount: '10', interval: 'month', ...json },
    });
    expect(plan.status).toBe(201);
    return plan.body.id as string;
  }

  /**
   * A page whose `window.ethereum` is answered here, in node, for `customer`'s DeleGator. `erc7715: false`
   * is a wallet that does not know `wallet_grantPermissions` (EIP-1193 4200) but signs typed data.
   */
  async function pageWithWallet(
    customer: Customer,
    {
      viewport,
      erc7715 = true,
      amountShortBy = () => 0n,
    }: {
      viewport: { width: number; height: number };
      erc7715?: boolean;
      /** Grants this much less than asked: a wallet (or a customer) that changed the amount. */
      amountShortBy?: () => bigint;
    },
  ): Promise<{ page: Page; problems: string[]; calls: WalletCall[] }> {
    const context = await browser.newContext({ viewport });
    const page = await context.newPage();
    const problems: string[] = [];
    const calls: WalletCall[] = [];
    page.on('console', (message) => {
      // A refused subscription's 400 is logged by the browser: the one error the test provokes.
      if (message.type() === 'error' && !message.text().includes('status of 400'))
        problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(String(error)));
    await page.exposeFunction('walletRequest', async (call: WalletCall): Promise<WalletAnswer> => {
      calls.push(call);
      const params = (call.params ?? []) as unknown[];
      switch (call.method) {
        case 'eth_requestAccounts':
        case 'eth_accounts':
          return { result: [customer.account] };
        case 'eth_chainId':
          return { result: numberToHex(chain.chainId) };
        case 'eth_getCode':
          return { result: await publicClientFor(chain.rpcUrl).getCode({ address: params[0] as Address }) };
        case 'wallet_switchEthereumChain':
          return { result: null };
        case 'wallet_grantPermissions':
          if (!erc7715) return { error: { code: 4200, message: 'Unsupported method' } };
          return { result: [await grant(customer, params[0] as GrantRequest, amountShortBy())] };
        case 'eth_signTypedData_v4':
          return { result: await signTyped(customer, params[1] as string) };
        default:
          return { error: { code: 4200, message: `Unsupported method ${call.method}` } };
      }
    });
    await page.addInitScript(() => {
      const bridge = (window as unknown as { walletRequest: (call: unknown) => Promise<WalletAnswer> })
        .walletRequest;
      (window as unknown as { ethereum: unknown }).ethereum = {
        async request(call: WalletCall) {
          const answer = await bridge(call);
          if ('error' in answer)
            throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
          return answer.result;
        },
      };
    });
    return { page, problems, calls };
  }

  interface GrantRequest {
    chainId: Hex;
    from: Address;
    to: Address;
    permission: {
      type: string;
      data: { tokenAddress: Address; periodAmount: Hex; periodDuration: number; startTime: number };
    };
  }

  /** The wallet's side of ERC-7715: the DeleGator's root delegation to `to`, signed by its owner. */
  async function grant(customer: Customer, request: GrantRequest, shortBy: bigint) {
    expect(request.permission.type).toBe('erc20-token-periodic');
    const { data } = request.permission;
    const delegation = await signDelegation(
      customer.owner,
      {
        delegate: getAddress(request.to),
        delegator: customer.account,
        authority: ROOT_AUTHORITY,
        caveats: [
          periodTransferCaveat(frameworkOn(chain), {
            token: getAddress(data.tokenAddress),
            periodAmount: BigInt(data.periodAmount) - shortBy,
            periodDuration: BigInt(data.periodDuration),
            startTime: BigInt(data.startTime),
          }),
        ],
        salt: BigInt(Date.now()),
      },
      chain,
    );
    return {
      ...request,
      context: encodePermissionContext([delegation]),
      dependencies: [],
      delegationManager: frameworkOn(chain).delegationManager,
    };
  }

  /** eth_signTypedData_v4 by the DeleGator's owner (the account checks it through ERC-1271). */
  async function signTyped(customer: Customer, json: string): Promise<Hex> {
    const typed = JSON.parse(json) as {
      domain: Record<string, unknown>;
      types: Record<string, { name: string; type: string }[]>;
      primaryType: string;
      message: Record<string, unknown>;
    };
    const { EIP712Domain: _domainType, ...types } = typed.types;
    return customer.owner.signTypedData({
      domain: typed.domain,
      types,
      primaryType: typed.primaryType,
      message: { ...typed.message, salt: BigInt(typed.message.salt as string) },
    });
  }

  const eventsOf = async (subscriptionId: string) =>
    (
      await stack.db
        .selectFrom('events')
        .select(['type', 'payload'])
        .where('merchant_id', '=', stack.merchant.merchantId)
        .where('type', 'like', 'subscription.%')
        .execute()
    ).filter((event) => JSON.parse(event.payload).data.subscription.id === subscriptionId);

  it('grants the periodic permission from an ERC-7715 wallet and is charged its first period', async () => {
    const planId = await newPlan();
    const http = await stack.app.request(`/subscribe/${planId}`);
    expect(http.status).toBe(200);
    expect(http.headers.get('content-security-policy')).toMatch(
      /default-src 'none'; script-src 'nonce-[^']+'/,
    );
    expect(http.text).toContain('Tea &lt;Club&gt;');
    expect(http.text).not.toContain('<Club>');

    const customer = await newCustomer(100n * TOKENS, chain);
    const before = await usdcBalance(chain, customer.account);
    let shortBy = 1n;
    const { page, problems, calls } = await pageWithWallet(customer, {
      viewport: PHONE,
      amountShortBy: () => shortBy,
    });
    await page.goto(`${stack.app.baseUrl}/subscribe/${planId}`);
    expect(await page.getByTestId('plan-name').textContent()).toBe('Leaf of the month');
    expect(await page.getByTestId('plan-amount').textContent()).toBe('$10.00');
    const words = await page.getByTestId('permission-words').innerText();
    expect(words).toContain(
      'You allow Tea <Club> to take at most 10 USDC on Ethereum Sepolia from your account once every month (30 days)',
    );
    expect(words).toContain('until you cancel');
    expect(words).toContain('manage link');
    // The words are on the page before the wallet is asked anything.
    expect(calls).toEqual([]);
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'subscribe-form-375.png'), fullPage: true });

    await page.getByTestId('subscribe-connect').click();
    await page.getByTestId('subscribe-grant').waitFor();
    expect(await page.getByTestId('subscribe-account').textContent()).toContain(customer.account);

    // The wallet grants a cent less than asked: refused in place with the service's sentence, nothing stored.
    await page.getByTestId('subscribe-grant').click();
    await page.getByText('the plan charges exactly 10000000').waitFor();
    expect(
      await stack.db.selectFrom('subscriptions').select('id').where('plan_id', '=', planId).execute(),
    ).toEqual([]);

    shortBy = 0n;
    await page.getByTestId('subscribe-grant').click();
    await page.getByTestId('subscribed').waitFor();
    expect(await page.getByTestId('subscription-status').textContent()).toBe('Active');
    const grants = calls.filter((call) => call.method === 'wallet_grantPermissions');
    expect((grants[1]!.params as GrantRequest[])[0]).toMatchObject({
      chainId: numberToHex(ETHEREUM_SEPOLIA),
      to: executor,
      permission: {
        type: 'erc20-token-periodic',
        data: {
          tokenAddress: getAddress(stack.contracts(ETHEREUM_SEPOLIA).usdc!),
          periodAmount: numberToHex(AMOUNT),
          periodDuration: 30 * 86_400,
        },
      },
    });
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'subscribed-375.png'), fullPage: true });
    const manageHref = await page.getByTestId('manage-link').getAttribute('href');
    expect(manageHref).toMatch(/\/subscribe\/manage\/[A-Za-z0-9_-]{43}$/);

    const [row] = await stack.db
      .selectFrom('subscriptions')
      .selectAll()
      .where('plan_id', '=', planId)
      .execute();
    expect(row).toMatchObject({ status: 'active', customer_account: customer.account });

    // The project's workers charge the first period; its session completes once its transfer is buried.
    const charge = await waitFor(
      () =>
        stack.db
          .selectFrom('subscription_charges')
          .selectAll()
          .where('subscription_id', '=', row!.id)
          .where('period_index', '=', 0)
          .executeTakeFirst(),
      (found) => found?.status === 'redeemed',
      'the first charge',
    );
    await waitFor(
      async () => {
        await stack.chain(ETHEREUM_SEPOLIA).mine({ blocks: CONFIRMATIONS + 1 });
        return (
          await stack.db
            .selectFrom('sessions')
            .select('status')
            .where('id', '=', charge!.session_id)
            .executeTakeFirst()
        )?.status;
      },
      (status) => status === 'completed',
      'the first period’s session',
    );
    expect(await usdcBalance(chain, customer.account)).toBe(before - AMOUNT);
    const types = await waitFor(
      async () => (await eventsOf(row!.id)).map((event) => event.type).sort(),
      (found) => found.includes('subscription.renewed'),
      'subscription.renewed',
    );
    expect(types).toEqual(['subscription.created', 'subscription.renewed']);
    expect((await findSubscriptionById(stack.db, row!.id))!.latest_session_id).toBe(charge!.session_id);
    expect(problems).toEqual([]);

    // The customer's manage link, on a wide screen: cancel, confirmed in place, at the period's end.
    const wide = await browser.newPage({ viewport: DESKTOP });
    const wideProblems: string[] = [];
    wide.on('pageerror', (error) => wideProblems.push(String(error)));
    await wide.goto(`${stack.app.baseUrl}${new URL(manageHref!).pathname}`);
    expect(await wide.getByTestId('manage-status').textContent()).toBe('Active');
    expect(await seriousAccessibilityViolations(wide)).toEqual([]);
    await wide.screenshot({ path: join(SCREENSHOTS, 'manage-1280.png'), fullPage: true });
    await wide.getByTestId('manage-cancel').click();
    await wide.getByTestId('manage-confirm').click();
    await wide.getByText('Canceled: it ends on').waitFor();
    expect(await wide.getByText('Next charge').isHidden()).toBe(true);
    await wide.screenshot({ path: join(SCREENSHOTS, 'manage-canceled-1280.png'), fullPage: true });
    expect(await findSubscriptionById(stack.db, row!.id)).toMatchObject({
      cancel_at_period_end: true,
      status: 'active',
    });
    expect(wideProblems).toEqual([]);
    await wide.close();
    await page.context().close();
  }, 300_000);

  it('a DeleGator wallet without ERC-7715 signs the same delegation as typed data; wide screen', async () => {
    const planId = await newPlan({ name: 'Weekly leaves', amount: '2.5', interval: 'week', trialDays: 7 });
    const customer = await newCustomer(10n * TOKENS, chain);
    const { page, problems, calls } = await pageWithWallet(customer, { viewport: DESKTOP, erc7715: false });
    await page.goto(`${stack.app.baseUrl}/subscribe/${planId}`);
    expect(await page.getByTestId('plan-trial').textContent()).toContain('Free for 7 days');
    expect(await page.getByTestId('permission-words').innerText()).toContain('after your 7-day trial');
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'subscribe-form-1280.png'), fullPage: true });
    await page.getByTestId('subscribe-connect').click();
    await page.getByTestId('subscribe-grant').click();
    await page.getByTestId('subscribed').waitFor();
    expect(await page.getByTestId('subscription-status').textContent()).toBe('Trial');
    expect(calls.map((call) => call.method)).toEqual([
      'eth_requestAccounts',
      'wallet_grantPermissions',
      'eth_getCode',
      'wallet_switchEthereumChain',
      'eth_signTypedData_v4',
    ]);
    await page.screenshot({ path: join(SCREENSHOTS, 'subscribed-1280.png'), fullPage: true });
    const [row] = await stack.db
      .selectFrom('subscriptions')
      .selectAll()
      .where('plan_id', '=', planId)
      .execute();
    expect(row).toMatchObject({
      status: 'trialing',
      customer_account: customer.account,
      period_amount: '2500000',
    });
    expect(problems).toEqual([]);
    await page.context().close();
  }, 120_000);

  it('answers an unknown plan with its 404 page and an archived plan without a form', async () => {
    const unknown = await stack.app.request('/subscribe/00000000-0000-4000-8000-000000000000');
    expect([unknown.status, unknown.headers.get('content-type')]).toEqual([404, 'text/html; charset=utf-8']);
    expect(unknown.text).toContain('Plan not found');
    expect((await stack.app.request('/subscribe/not-a-plan')).status).toBe(404);
    const planId = await newPlan();
    await stack.app.request(`/v1/plans/${planId}/archive`, { method: 'POST', headers: stack.sk });
    const archived = await stack.app.request(`/subscribe/${planId}`);
    expect(archived.status).toBe(200);
    expect(archived.text).toContain('This plan takes no new subscribers');
    expect(archived.text).not.toContain('data-subscribe-form');
    const manage = await stack.app.request(`/subscribe/manage/${'A'.repeat(43)}`);
    expect(manage.status).toBe(404);
    expect(
      (
        await stack.app.request(`/v1/subscription-manage/${'A'.repeat(43)}/cancel`, {
          method: 'POST',
          json: {},
        })
      ).status,
    ).toBe(404);
  });
});
