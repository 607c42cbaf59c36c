import { parseArgs } from 'node:util';
import { latestMailedCode } from './mailDevCodes';
import { requireStackFile } from './stackFile';

/**
 * `npm run mail-code [-- --email <address>]`: prints the newest login or verification code MailDev
 * received for the dev merchant's e-mail (or `--email`), for the tool server's `login_verify` after
 * its `login_start`. The same mail is in MailDev's web UI (`mail.webUrl` of the stack file).
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { email: { type: 'string' } } });
  const stack = requireStackFile();
  const email = values.email ?? stack.devMerchant?.email;
  if (!email) throw new Error('the stack file names no dev merchant yet: pass --email <address>');
  const code = await latestMailedCode(stack.mail.webUrl, email);
  if (!code) throw new Error(`MailDev holds no code for ${email} (call login_start first)`);
  process.stdout.write(`${code}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`mail-code: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
