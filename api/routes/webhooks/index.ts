import type { AppContext } from '../../appContext';
import type { AnyRoute } from '../../routing/route';
import { webhookDeliveryRoutes } from './deliveries';
import { webhookEndpointRoutes } from './endpoints';
import { webhookRedispatchRoutes } from './redispatch';
import { webhookSecretRoutes } from './secrets';
import { webhookTestEventRoutes } from './testEvents';

/** Every webhook route: endpoints (CRUD), secrets (rotation), deliveries (history), test events, re-dispatch. */
export function webhookRoutes(app: AppContext): AnyRoute[] {
  return [
    ...webhookEndpointRoutes(app),
    ...webhookSecretRoutes(app),
    ...webhookDeliveryRoutes(app),
    ...webhookTestEventRoutes(app),
    ...webhookRedispatchRoutes(app),
  ];
}
