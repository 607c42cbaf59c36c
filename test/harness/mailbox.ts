import { testStack } from './stack';

/** What MailDev's REST API answers for one message (the fields tests read). */
export interface ReceivedMail {
  id: string;
  time: string;
  subject: string;
  text: string;
  to: { address: string; name: string }[];
}

/** Every message MailDev holds for `address` (any case), in arrival order. */
export async function mailsTo(address: string): Promise<ReceivedMail[]> {
  const response = await fetch(`${testStack().mail.webUrl}/api/email`);
  if (!response.ok) throw new Error(`MailDev answered ${response.status}`);
  const mails = (await response.json()) as ReceivedMail[];
  return mails.filter((mail) =>
    mail.to.some((recipient) => recipient.address.toLowerCase() === address.toLowerCase()),
  );
}

/**
 * Waits until `address` has received `count` messages and returns the 6-digit code of the last one
 * (tests use a fresh address each, so the count says which message is meant).
 */
export async function waitForCode(
  address: string,
  { count = 1, timeoutMs = 15_000 }: { count?: number; timeoutMs?: number } = {},
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mails = await mailsTo(address);
    if (mails.length >= count) {
      const code = /\b(\d{6})\b/.exec(mails[count - 1]!.text)?.[1];
      if (!code) throw new Error(`mail to ${address} carries no 6-digit code: ${mails[count - 1]!.subject}`);
      return code;
    }
    if (Date.now() > deadline) throw new Error(`no mail #${count} to ${address} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A fresh address nobody else in the run uses. */
export function freshEmail(label = 'merchant'): string {
  return `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}@shop.example`;
}
