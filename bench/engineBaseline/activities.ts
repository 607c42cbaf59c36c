import { WEBHOOK_ATTEMPT_TIMEOUT_MS, WEBHOOK_RESPONSE_BODY_LIMIT_BYTES } from '../../webhooks/deliveryPolicy';
import { sendWebhook } from '../../webhooks/sendWebhook';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhookPayload } from '../../webhooks/signWebhookPayload';

/** The baseline's one activity: sign the body and POST it, as the delivery activity does, nothing recorded. */
export function createEngineBaselineActivities({
  url,
  secret,
  onAnswer,
}: {
  url: string;
  secret: string;
  /** Called after each POST with whether it got a 2xx (the bench counts completions with it). */
  onAnswer(succeeded: boolean): void;
}) {
  return {
    async postSigned({ eventId, payload }: { eventId: string; payload: string }): Promise<void> {
      const { header } = signWebhookPayload({ rawBody: payload, secret });
      const result = await sendWebhook({
        url,
        rawBody: payload,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'stablepay-webhooks/1',
          [SIGNATURE_HEADER]: header,
          [EVENT_ID_HEADER]: eventId,
        },
        allowPrivateTargets: true,
        timeoutMs: WEBHOOK_ATTEMPT_TIMEOUT_MS,
        responseBodyLimitBytes: WEBHOOK_RESPONSE_BODY_LIMIT_BYTES,
      });
      onAnswer(result.outcome === 'succeeded');
    },
  };
}

export type EngineBaselineActivities = ReturnType<typeof createEngineBaselineActivities>;
