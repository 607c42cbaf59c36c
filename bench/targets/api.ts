import { serveApp } from './serveApp';

/** The full Koa stack (middleware, logging, metrics) as the api process builds it, on a free port. */
serveApp();
