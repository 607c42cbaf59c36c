import type { Audience, AuthKind } from '../../routing/route';

/**
 * SPEC: two parallel route sets with identical shapes. Every webhook-endpoint handler is defined
 * once and mounted under both, so the JWT and the SK surface cannot drift apart.
 */
export interface WebhookRouteSet {
  base: string;
  auth: Extract<AuthKind, 'jwt' | 'sk'>;
  audience: Audience;
  /** Appended to summaries so the two operations stay apart in the OpenAPI document. */
  label: string;
}

export const WEBHOOK_ROUTE_SETS: readonly WebhookRouteSet[] = [
  { base: '/v1/merchants/me/webhooks', auth: 'jwt', audience: 'dashboard', label: 'dashboard' },
  { base: '/v1/webhooks', auth: 'sk', audience: 'dashboard', label: 'API key' },
];

export const WEBHOOKS_TAG = 'Webhooks';
