import { devDashboardLink } from './dashboardSignInLink';
import { requireStackFile } from './stackFile';

/**
 * `npm run dashboard-link`: prints a fresh dashboard sign-in link for the stack's dev merchant (one
 * line, so `xdg-open $(npm run --silent dashboard-link)` works). It works once, within a minute; the
 * page names the account and asks before it signs the tab in.
 */
async function main(): Promise<void> {
  const stack = requireStackFile();
  if (!stack.devMerchant)
    throw new Error('the stack file names no dev merchant: let `npm start` finish first');
  process.stdout.write(`${await devDashboardLink(stack.databaseUrl, stack.apiUrl, stack.devMerchant.id)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`dashboard-link: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
