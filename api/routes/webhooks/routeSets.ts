import { twinRouteSets, type TwinRouteSet } from '../../routing/twinRouteSets';

export type WebhookRouteSet = TwinRouteSet;

export const WEBHOOK_ROUTE_SETS = twinRouteSets({
  jwtBase: '/v1/merchants/me/webhooks',
  skBase: '/v1/webhooks',
});

export const WEBHOOKS_TAG = 'Webhooks';
