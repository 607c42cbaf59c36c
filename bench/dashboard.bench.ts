import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { sql } from 'kysely';
import type { Browser } from 'playwright-core';
import { buildDashboard, DASHBOARD_OUT } from '../dashboard/build';
import { createDb } from '../db/client';
import { launchChromium } from '../test/checkout/chromium';
import { openSignedIn } from '../test/dashboard/browser';
import { signUpBenchMerchant, type BenchMerchant } from './lib/merchantApi';
import { machineLoad } from './lib/rounds';
import { reportBenchmark } from './lib/results';
import { startBenchServices } from './lib/services';
import { startTarget } from './lib/target';

/**
 * The merchant dashboard's budgets (issue 30): first-load JavaScript gzipped ≤ 200 KB, read from the
 * built bundle; and the sessions page's time to interactive (navigation start until the first page of
 * the list is on screen and answering) for an account with 10,000 sessions against an empty account,
 * in Debian's chromium against the real api and Postgres, rounds alternating, medians compared.
 */
const SESSIONS = 10_000;
const ROUNDS = 5;

function firstLoadSizes(): { scriptGzipBytes: number; styleGzipBytes: number; scriptBytes: number } {
  const manifest = JSON.parse(readFileSync(join(DASHBOARD_OUT, '.vite', 'manifest.json'), 'utf8'));
  const entry = manifest['src/main.tsx'] as { file: string; css?: string[] };
  const script = readFileSync(join(DASHBOARD_OUT, entry.file));
  const styles = (entry.css ?? []).map((file) => readFileSync(join(DASHBOARD_OUT, file)));
  return {
    scriptBytes: script.length,
    scriptGzipBytes: gzipSync(script, { level: 9 }).length,
    styleGzipBytes: styles.reduce((sum, style) => sum + gzipSync(style, { level: 9 }).length, 0),
  };
}

async function seedSessions(databaseUrl: string, merchant: BenchMerchant, apiUrl: string): Promise<void> {
  const me = (await (
    await fetch(`${apiUrl}/v1/merchants/me`, { headers: { authorization: merchant.dashboardAuthorization } })
  ).json()) as { id: string };
  const db = createDb({ connectionString: databaseUrl, maxConnections: 1 });
  try {
    // One statement, like a bulk import: completed sessions a minute apart, newest first.
    await sql`
      insert into sessions (id, merchant_id, amount, merchant_name, line_items, payment_option_symbols,
        sandbox_mode, payout_address, status, expires_at, paid_at, created_at, updated_at)
      select gen_random_uuid(), ${me.id}, '25.000000', 'Order ' || i, '[]', '{USDC}', true,
        ${merchant.payoutAddress.toLowerCase()}, 'completed', now() - make_interval(mins => i) + interval '1 hour',
        now() - make_interval(mins => i), now() - make_interval(mins => i), now()
      from generate_series(1, ${SESSIONS}::int) as i`.execute(db);
    await sql`analyze sessions`.execute(db);
  } finally {
    await db.destroy();
  }
}

/** Milliseconds from navigation start until the sessions page shows its first page (or its empty state). */
async function timeToInteractive(browser: Browser, apiUrl: string, merchant: BenchMerchant): Promise<number> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    const token = merchant.dashboardAuthorization.replace('Bearer ', '');
    // Timed from the dashboard's own navigation start (performance.now() of that document).
    await openSignedIn(page, apiUrl, token, '/sessions');
    await page.waitForFunction(
      () =>
        document.querySelector('table tbody tr a') !== null ||
        document.querySelector('.notice.empty') !== null,
      undefined,
      { polling: 'raf' },
    );
    return await page.evaluate(() => performance.now());
  } finally {
    await context.close();
  }
}

const step = (text: string) => process.stderr.write(`dashboard bench: ${text}\n`);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const machineAtStart = machineLoad();
  await buildDashboard();
  const sizes = firstLoadSizes();
  step(`bundle ${sizes.scriptGzipBytes} bytes gzipped; starting services`);
  const services = await startBenchServices();
  const api = await startTarget('api.ts', [], {
    ...services.env,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_LOGIN_PER_MINUTE: '100000',
  });
  const browser = await launchChromium();
  try {
    const empty = await signUpBenchMerchant(api.url);
    const full = await signUpBenchMerchant(api.url);
    step('seeding sessions');
    await seedSessions(services.databaseUrl, full, api.url);
    step('measuring');
    // One settling round each (bundle in the HTTP cache, connections warm), then alternate.
    await timeToInteractive(browser, api.url, empty);
    await timeToInteractive(browser, api.url, full);
    const emptyMs: number[] = [];
    const fullMs: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      emptyMs.push(await timeToInteractive(browser, api.url, empty));
      fullMs.push(await timeToInteractive(browser, api.url, full));
    }
    const ratio = median(fullMs) / median(emptyMs);
    const kb = (bytes: number) => bytes / 1024;
    reportBenchmark('dashboard', {
      machine: { atStart: machineAtStart, atEnd: machineLoad() },
      firstLoad: sizes,
      sessionsPage: { sessions: SESSIONS, rounds: ROUNDS, emptyMs, fullMs },
      ratios: { firstLoadJsGzipKb: kb(sizes.scriptGzipBytes), sessionsPageTtiFullVsEmpty: ratio },
      goals: [
        {
          label: 'dashboard first-load JavaScript, gzipped (KB)',
          now: kb(sizes.scriptGzipBytes),
          goal: { atMost: 200 },
          subject: `${kb(sizes.scriptGzipBytes).toFixed(1)} KB gzipped (${kb(sizes.scriptBytes).toFixed(1)} KB raw), stylesheet ${kb(sizes.styleGzipBytes).toFixed(1)} KB gzipped`,
          baseline: 'the 200 KB budget',
        },
        {
          label: `sessions page time to interactive, ${SESSIONS} sessions vs an empty account`,
          now: ratio,
          goal: { atMost: 1.5 },
          subject: `median ${median(fullMs).toFixed(0)} ms (${SESSIONS} sessions)`,
          baseline: `median ${median(emptyMs).toFixed(0)} ms (no sessions)`,
        },
      ],
    });
  } finally {
    await browser.close();
    // The api's graceful close waits for idle keep-alive sockets: give it a moment, not forever.
    await Promise.race([api.stop(), new Promise((resolve) => setTimeout(resolve, 5_000))]);
    await services.stop();
  }
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
