import { setTimeout as delay } from 'node:timers/promises';

/** One message as MailDev's REST API (`GET <webUrl>/api/email`) lists it: the fields read here. */
interface MailDevMessage {
  id: string;
  text: string;
  to: { address: string }[];
}

async function messagesTo(mailWebUrl: string, address: string): Promise<MailDevMessage[]> {
  const response = await fetch(`${mailWebUrl}/api/email`);
  if (!response.ok) throw new Error(`MailDev (${mailWebUrl}) answered ${response.status}`);
  const messages = (await response.json()) as MailDevMessage[];
  return messages.filter((message) =>
    message.to.some((recipient) => recipient.address.toLowerCase() === address.toLowerCase()),
  );
}

/** The ids of the messages MailDev already holds for `address`: taken before asking for a code. */
export async function mailDevMessageIds(mailWebUrl: string, address: string): Promise<Set<string>> {
  return new Set((await messagesTo(mailWebUrl, address)).map((message) => message.id));
}

/**
 * Waits for a message to `address` that is not among `seen` and returns its 6-digit code — how the dev
 * tools read a login or verification code without a person opening MailDev's web UI.
 */
export async function waitForMailedCode(
  mailWebUrl: string,
  address: string,
  { seen, timeoutMs = 30_000 }: { seen: Set<string>; timeoutMs?: number },
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const fresh = (await messagesTo(mailWebUrl, address)).find((message) => !seen.has(message.id));
    const code = fresh && /\b(\d{6})\b/.exec(fresh.text)?.[1];
    if (code) return code;
    if (fresh) throw new Error(`the mail to ${address} carries no 6-digit code`);
    if (Date.now() > deadline) throw new Error(`no code mailed to ${address} within ${timeoutMs / 1000} s`);
    await delay(200);
  }
}

/** The 6-digit code of the newest message MailDev holds for `address`, or undefined when it holds none. */
export async function latestMailedCode(mailWebUrl: string, address: string): Promise<string | undefined> {
  const messages = await messagesTo(mailWebUrl, address);
  const newest = messages.at(-1);
  return newest && /\b(\d{6})\b/.exec(newest.text)?.[1];
}
