import { randomUUID } from 'node:crypto';
import type { Address, Hex } from 'viem';
import type { PolicyApprovalWebhook } from '../../db/schema';
import { sendWebhook, type WebhookSendResult } from '../../webhooks/sendWebhook';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhookPayload } from '../../webhooks/signWebhookPayload';
import { denial, type PaymasterDenial } from '../rpc/denials';

/**
 * A sponsorship policy's approval webhook (issue 43, item 2): before the paymaster signs an operation
 * the policy would sponsor, it POSTs the operation to the merchant's receiver, signed like our events
 * (SPEC "Events": `X-Service-Signature`, `X-Service-Event-Id`), and waits at most the policy's timeout
 * for `{ sponsor: boolean, reason?: string }`. Anything else (an error status, a redirect, which is never
 * followed, a body that is not that object, no answer in time, a refused connection, an address that is
 * not public at delivery time) is an error, answered as the policy's `onError` says. No signature exists
 * before the answer: the caller asks first and signs only on approval (docs/paymaster.md).
 */

export const APPROVAL_EVENT_TYPE = 'sponsorship.approval';
/** An answer is a small JSON object; anything longer is not one. */
const APPROVAL_ANSWER_LIMIT_BYTES = 4096;
/** The receiver's reason, as the caller reads it in the JSON-RPC error: bounded, printable. */
const REASON_MAX_CHARS = 200;

export interface ApprovalCall {
  to: Address;
  /** Wei, as a decimal string. */
  value: string;
  data: Hex;
}

export interface ApprovalRequestData {
  clientId: string;
  policyId: string;
  chainId: number;
  sender: Address;
  calls: ApprovalCall[];
  /** The operation's maximum charge in USD (decimal string); null when it was not priced. */
  estimatedUsd: string | null;
}

/** The webhook as stored, with its sealed signing secret (shown to the merchant once). */
export type StoredApprovalWebhook = PolicyApprovalWebhook;

export interface ApprovalDependencies {
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: as for event endpoints, only public addresses otherwise. */
  allowPrivateTargets: boolean;
  /** Opens the webhook's sealed secret (webhooks/webhookSecrets.ts) for the policy. */
  openSecret: (sealed: string, binding: string) => string;
  now: () => Date;
}

/** What the receiver said, or why it could not be heard. */
export type ApprovalAnswer =
  { kind: 'approved' } | { kind: 'refused'; reason: string | null } | { kind: 'failed'; detail: string };

/** The associated data a policy's approval secret is sealed with: it opens for this policy only. */
export const approvalSecretBinding = (policyId: string): string => `policy-approval:${policyId}`;

/** POSTs the approval request once and reads the answer; never throws. */
export async function askApproval(
  deps: ApprovalDependencies,
  webhook: StoredApprovalWebhook,
  data: ApprovalRequestData,
): Promise<ApprovalAnswer> {
  if (!webhook.secretCiphertext) return { kind: 'failed', detail: 'the webhook has no signing secret' };
  let secret: string;
  try {
    secret = deps.openSecret(webhook.secretCiphertext, approvalSecretBinding(data.policyId));
  } catch {
    return { kind: 'failed', detail: 'the signing secret could not be opened' };
  }
  const id = `evt_${randomUUID()}`;
  const rawBody = JSON.stringify({ id, type: APPROVAL_EVENT_TYPE, data });
  const { header } = signWebhookPayload({
    rawBody,
    secret,
    timestamp: Math.floor(deps.now().getTime() / 1000),
  });
  const sent = await sendWebhook({
    url: webhook.url,
    rawBody,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'stablepay-webhooks/1',
      [SIGNATURE_HEADER]: header,
      [EVENT_ID_HEADER]: id,
    },
    allowPrivateTargets: deps.allowPrivateTargets,
    timeoutMs: webhook.timeoutMs,
    responseBodyLimitBytes: APPROVAL_ANSWER_LIMIT_BYTES,
  });
  return readApprovalAnswer(sent);
}

/** The receiver's answer: a 2xx with `{ sponsor: boolean, reason?: string }`, or a failure saying why not. */
export function readApprovalAnswer(sent: WebhookSendResult): ApprovalAnswer {
  if (sent.outcome !== 'succeeded') return { kind: 'failed', detail: sent.error ?? sent.outcome };
  let answer: unknown;
  try {
    answer = JSON.parse(sent.responseBody ?? '');
  } catch {
    return { kind: 'failed', detail: 'the answer is not JSON' };
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
    return { kind: 'failed', detail: 'the answer is not an object' };
  const { sponsor, reason } = answer as { sponsor?: unknown; reason?: unknown };
  if (typeof sponsor !== 'boolean') return { kind: 'failed', detail: 'the answer has no boolean "sponsor"' };
  if (reason !== undefined && reason !== null && typeof reason !== 'string')
    return { kind: 'failed', detail: 'the answer\'s "reason" is not a string' };
  if (sponsor) return { kind: 'approved' };
  return { kind: 'refused', reason: typeof reason === 'string' ? printableReason(reason) : null };
}

/** The receiver's reason on one line, control characters dropped, at most REASON_MAX_CHARS. */
function printableReason(reason: string): string | null {
  // eslint-disable-next-line no-control-regex
  const line = reason.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  if (line.length === 0) return null;
  return line.length > REASON_MAX_CHARS ? `${line.slice(0, REASON_MAX_CHARS - 1)}…` : line;
}

/**
 * The answer as the policy's decision: approved, or the denial to answer. A refusal is the merchant's
 * rule refusing the operation (`paymaster_blocked_by_merchant_rule`, -32600, with the receiver's reason);
 * an error denies under `onError: "deny"` and approves under `"allow"`.
 */
export function approvalDecision(
  policy: { name: string; approvalWebhook: Pick<PolicyApprovalWebhook, 'onError'> },
  answer: ApprovalAnswer,
): { approved: true; onError?: string } | { approved: false; denial: PaymasterDenial } {
  switch (answer.kind) {
    case 'approved':
      return { approved: true };
    case 'refused':
      return {
        approved: false,
        denial: denial(
          'paymaster_blocked_by_merchant_rule',
          `the approval webhook of policy "${policy.name}" refused the operation${answer.reason ? `: ${answer.reason}` : ''}`,
          'approval_refused',
        ),
      };
    case 'failed':
      if (policy.approvalWebhook.onError === 'allow') return { approved: true, onError: answer.detail };
      return {
        approved: false,
        denial: denial(
          'paymaster_blocked_by_merchant_rule',
          `the approval webhook of policy "${policy.name}" did not answer (${answer.detail}); the policy denies on error`,
          'approval_unavailable',
        ),
      };
  }
}
