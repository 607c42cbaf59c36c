import type { Browser } from 'playwright-core';
import { createWebhookSecretBox, developmentWebhookSecretKey } from '../../webhooks/webhookSecrets';
import { launchChromium } from '../checkout/chromium';
import { startSettlementStack, type SettlementStack } from '../settlement/settlementStack';
import { startWebhookReceiver, type WebhookReceiver } from '../webhooks/receiver';
import { DESKTOP, openDashboard, openSignedIn, type DashboardPage } from './browser';

/**
 * A settlement world of its own (local chains, the worker, Temporal, Postgres) delivering webhooks to a
 * loopback receiver, and chromium signed in as its merchant at `path`, confirming every dialog.
 */
export interface SettlementDashboard {
  stack: SettlementStack;
  browser: Browser;
  receiver: WebhookReceiver;
  dashboard: DashboardPage;
  stop(): Promise<void>;
}

export async function startSettlementDashboard(path: string): Promise<SettlementDashboard> {
  const [stack, browser, receiver] = await Promise.all([
    startSettlementStack({
      webhooks: {
        secrets: createWebhookSecretBox(developmentWebhookSecretKey()),
        allowPrivateTargets: true,
      },
    }),
    launchChromium(),
    startWebhookReceiver(),
  ]);
  const dashboard = await openDashboard(browser, stack.app, { viewport: DESKTOP });
  dashboard.page.on('dialog', (dialog) => void dialog.accept());
  await openSignedIn(dashboard.page, stack.app.baseUrl, stack.merchant.token, path);
  return {
    stack,
    browser,
    receiver,
    dashboard,
    async stop() {
      await browser.close();
      await receiver.close();
      await stack.stop();
    },
  };
}

/**
 * Registers the suite's hooks around one settlement dashboard at `path` (started once, stopped after the
 * suite; after each test the page shows no script error and made no foreign request) and answers it.
 */
export function useSettlementDashboard(path: string): () => SettlementDashboard {
  let world: SettlementDashboard | undefined;
  beforeAll(async () => {
    world = await startSettlementDashboard(path);
    // Private chains with every contract deployed: seconds on a quiet machine, minutes on a loaded one.
  }, 300_000);
  afterAll(async () => {
    await world?.stop();
  });
  afterEach(() => {
    expect(world!.dashboard.errors).toEqual([]);
    expect(world!.dashboard.foreignRequests).toEqual([]);
  });
  return () => world!;
}
