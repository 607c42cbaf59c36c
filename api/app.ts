import Koa from 'koa';
import type Router from '@koa/router';
import type { Config } from '../config';
import type { Db } from '../db/client';
import type { Logger } from './logger';
import { createHttpMetrics } from './metrics';
import { errorBody } from './middleware/errorBody';
import { jsonBody } from './middleware/jsonBody';
import { requestContext } from './middleware/requestContext';
import { resolveRevision } from './revision';
import { healthRoutes } from './routes/health';

/** What the HTTP app needs from the outside world; tests hand in real instances. */
export interface AppDependencies {
  config: Config;
  db: Db;
  logger: Logger;
}

/** Wires middleware and one router per resource. Creating the app opens no connections. */
export function createApp(deps: AppDependencies): Koa {
  const app = new Koa({ proxy: true });
  const metrics = createHttpMetrics();
  const routers: Router[] = [healthRoutes({ revision: resolveRevision(deps.config.REVISION), registry: metrics.registry })];

  app.use(requestContext(deps.logger, metrics));
  app.use(errorBody());
  app.use(jsonBody({ limitBytes: deps.config.BODY_LIMIT_BYTES, jsonRpcPaths: ['/v1/paymaster/rpc'] }));
  for (const router of routers) app.use(router.routes()).use(router.allowedMethods());
  return app;
}
