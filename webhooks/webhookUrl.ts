import { ipLiteralOf, isPublicAddress } from './targetAddress';

export interface WebhookUrlPolicy {
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: development and tests deliver to local receivers. */
  allowPrivateTargets: boolean;
}

const MAX_URL_LENGTH = 2048;

/**
 * Why a webhook URL is refused at registration, or undefined when it is acceptable. Checked here:
 * syntax (absolute https; plain http only where private targets are allowed), no credentials in
 * the URL, and literal IP addresses. DNS names are checked at delivery on the address actually
 * connected to (docs/decisions.md "Webhooks"), so a host that does not resolve yet can be registered.
 */
export function webhookUrlProblem(
  text: string,
  { allowPrivateTargets }: WebhookUrlPolicy,
): string | undefined {
  if (text.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  if (!URL.canParse(text)) return 'must be an absolute https URL';
  const url = new URL(text);
  const schemeAllowed = url.protocol === 'https:' || (allowPrivateTargets && url.protocol === 'http:');
  if (!schemeAllowed) return 'must be an absolute https URL';
  if (!url.hostname) return 'must be an absolute https URL';
  if (url.username || url.password) return 'must not carry credentials';
  const literal = ipLiteralOf(url.hostname);
  if (literal !== undefined && !allowPrivateTargets && !isPublicAddress(literal)) {
    return 'must not point to a private, loopback or link-local address';
  }
  return undefined;
}
