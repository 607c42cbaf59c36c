import type { Browser, Page } from 'playwright-core';
import type { Address } from 'viem';

/**
 * The branded site in chromium with an injected EIP-1193 wallet: the node signs for `visitor` (an anvil dev
 * account), as a wallet extension would for its user; every other call is forwarded to the chain's RPC.
 */

export interface OpenedSite {
  page: Page;
  /** Console errors and uncaught exceptions: must stay empty. */
  errors: string[];
  close(): Promise<void>;
}

/** Opens `siteUrl` with the wallet injected and connects it (the position shows once it is read). */
export async function openConnectedSite(
  browser: Browser,
  {
    siteUrl,
    rpcUrl,
    visitor,
    viewport,
  }: { siteUrl: string; rpcUrl: string; visitor: Address; viewport: { width: number; height: number } },
): Promise<OpenedSite> {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  await context.exposeFunction('__walletRpc', async (method: string, params: unknown[]) => {
    if (method === 'eth_requestAccounts' || method === 'eth_accounts') return { result: [visitor] };
    if (method === 'wallet_switchEthereumChain') return { result: null };
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return (await response.json()) as unknown;
  });
  await context.addInitScript(() => {
    const bridge = (
      window as unknown as {
        __walletRpc: (m: string, p: unknown[]) => Promise<{ result?: unknown; error?: { message: string } }>;
      }
    ).__walletRpc;
    (window as unknown as { ethereum: unknown }).ethereum = {
      async request({ method, params }: { method: string; params?: unknown[] }) {
        const answer = await bridge(method, params ?? []);
        if (answer.error) throw new Error(answer.error.message);
        return answer.result;
      },
    };
  });
  const page = await context.newPage();
  const opened: OpenedSite = { page, errors: [], close: () => context.close() };
  page.on('console', (message) => {
    if (message.type() === 'error') opened.errors.push(message.text());
  });
  page.on('pageerror', (error) => opened.errors.push(String(error)));
  const response = await page.goto(siteUrl);
  if (response?.status() !== 200) throw new Error(`${siteUrl} answered ${response?.status()}`);
  await page.getByRole('button', { name: 'Connect wallet' }).click();
  await page.waitForFunction(() => /USDe$/.test(document.querySelector('[data-position]')!.textContent!));
  return opened;
}

/** Waits for the site's message to start with `prefix`; an error message fails at once with its text. */
export const waitForMessage = (page: Page, prefix: string) =>
  page.waitForFunction(
    (start) => {
      const text = document.querySelector('[data-message]')!.textContent!;
      if (document.querySelector('[data-message].error')) throw new Error(text);
      return text.startsWith(start);
    },
    prefix,
    { timeout: 60_000 },
  );
