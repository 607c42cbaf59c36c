import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { TestApp } from '../harness/app';

/** Helpers for the dashboard's browser tests: a page on the real app, a wallet, axe, screenshots. */

export const PHONE = { width: 375, height: 812 };
export const DESKTOP = { width: 1280, height: 900 };
export const SCREENSHOTS = join(__dirname, '..', '..', 'test-output', 'dashboard');

export interface DashboardPage {
  page: Page;
  context: BrowserContext;
  /** Requests to anything but the app: must stay empty (the CSP and the bundle make none). */
  foreignRequests: string[];
  /** Console errors and uncaught exceptions, CSP violations included (4xx answers aside): must stay empty. */
  errors: string[];
}

/**
 * A fresh browser context on the app. With `wallet`, an EIP-1193 provider is injected before any page
 * script runs, backed by the local viem key: personal_sign is answered by the test process.
 */
export async function openDashboard(
  browser: Browser,
  app: Pick<TestApp, 'baseUrl'>,
  {
    viewport = DESKTOP,
    wallet,
    chainId = 11155111,
  }: { viewport?: { width: number; height: number }; wallet?: PrivateKeyAccount; chainId?: number } = {},
): Promise<DashboardPage> {
  const context = await browser.newContext({ viewport });
  const foreignRequests: string[] = [];
  const errors: string[] = [];
  context.on('request', (request) => {
    if (!request.url().startsWith(app.baseUrl) && !request.url().startsWith('data:'))
      foreignRequests.push(request.url());
  });
  if (wallet) {
    await context.exposeFunction('__testWalletSign', (hexMessage: `0x${string}`) =>
      wallet.signMessage({ message: { raw: hexMessage } }),
    );
    await context.addInitScript(
      ({ address, chainHex }) => {
        const signer = (window as unknown as { __testWalletSign: (hex: string) => Promise<string> })
          .__testWalletSign;
        (window as unknown as { ethereum: unknown }).ethereum = {
          async request({ method, params }: { method: string; params?: unknown[] }) {
            if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [address];
            if (method === 'eth_chainId') return chainHex;
            if (method === 'personal_sign') return signer(String(params?.[0]));
            throw Object.assign(new Error(`unsupported method ${method}`), { code: 4200 });
          },
        };
      },
      { address: wallet.address, chainHex: `0x${chainId.toString(16)}` },
    );
  }
  const page = await context.newPage();
  page.on('console', (message) => {
    // A 4xx the dashboard asked for and shows (bad input in a form) is the API answering, not a fault.
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return { page, context, foreignRequests, errors };
}

/** Where the dashboard keeps the tab's session token (dashboard/src/api.ts). */
export const TOKEN_KEY = 'stablepay.dashboard.token';

/**
 * Opens the dashboard at `path` in a tab signed in with `token`, as a sign-in leaves it: the token in
 * the tab's sessionStorage, written on a same-origin page first (a link can no longer sign a tab in).
 */
export async function openSignedIn(page: Page, baseUrl: string, token: string, path = ''): Promise<void> {
  await page.goto(`${baseUrl}/health`);
  await page.evaluate(([key, value]) => sessionStorage.setItem(key, value), [TOKEN_KEY, token] as const);
  await page.goto(`${baseUrl}/dashboard${path}`);
}

/** The tab's session token, or null when it is signed out. */
export const tokenIn = (page: Page) => page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY);

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is now (rule id and the first target). */
export async function seriousAccessibilityViolations(page: Page): Promise<string[]> {
  // Injected through the devtools protocol, not a <script> element: the page's CSP would refuse one.
  const client = await page.context().newCDPSession(page);
  await client.send('Runtime.evaluate', { expression: AXE_SOURCE });
  await client.detach();
  const violations = await page.evaluate(async () => {
    interface AxeViolation {
      id: string;
      impact: string;
      nodes: { target: string[] }[];
    }
    const axe = (
      window as unknown as {
        axe: { run: (context: Document, options: object) => Promise<{ violations: AxeViolation[] }> };
      }
    ).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      target: violation.nodes[0]?.target,
    }));
  });
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.impact} ${violation.id} at ${JSON.stringify(violation.target)}`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
