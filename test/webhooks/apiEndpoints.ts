import type { TestApp } from '../harness/app';
import { createApiKey, signInNewMerchant } from '../harness/merchants';
import type { ReceivedWebhook, WebhookReceiver } from './receiver';

/** A merchant of its own with an sk_ key and an endpoint (created through the API) at `receiver` + `path`. */
export async function merchantWithEndpoint(app: TestApp, receiver: WebhookReceiver, path: string) {
  const merchant = await signInNewMerchant(app);
  const sk = { authorization: `Bearer ${await createApiKey(app, merchant)}` };
  const created = await app.request('/v1/webhooks', {
    method: 'POST',
    headers: sk,
    json: { url: `${receiver.baseUrl}${path}` },
  });
  if (created.status !== 201) throw new Error(`endpoint creation answered ${created.status}`);
  return { merchant, sk, endpointId: created.body.id as string, secret: created.body.secret as string };
}

/** The requests `receiver` got at `path`, in order of arrival. */
export const arrivalsAt = (receiver: WebhookReceiver, path: string): ReceivedWebhook[] =>
  receiver.received.filter((request) => request.path === path);

/** Resolves once `count` requests have arrived at `path` (their list), or throws after `timeoutMs`. */
export async function waitForArrivalsAt(
  receiver: WebhookReceiver,
  path: string,
  count: number,
  timeoutMs = 30_000,
): Promise<ReceivedWebhook[]> {
  const deadline = Date.now() + timeoutMs;
  while (arrivalsAt(receiver, path).length < count) {
    if (Date.now() > deadline)
      throw new Error(`${path} got ${arrivalsAt(receiver, path).length} of ${count} requests`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return arrivalsAt(receiver, path);
}
