import { createApp } from '../app';
import { loadConfig } from '../../config';
import { createDb } from '../../db/client';
import { createLogger } from '../../logging/logger';

/**
 * The two OpenAPI documents exactly as the api serves them (`/openapi.json`, `/openapi/integrator.json`),
 * built from the app's route table without a running server: creating the app opens no connections,
 * and the documents' routes answer without touching the database.
 */
export async function openApiDocumentsOfApp(): Promise<{
  full: OpenApiDocument;
  integrator: OpenApiDocument;
}> {
  const config = loadConfig({
    NODE_ENV: 'development',
    LOG_LEVEL: 'silent',
    PUBLIC_BASE_URL: 'http://localhost:3000',
    // Never connected to: the pool opens a connection on the first query, and no route is run but these two.
    DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused',
  });
  const db = createDb({ connectionString: config.DATABASE_URL! });
  const app = await createApp({ config, db, logger: createLogger({ level: 'silent' }) });
  try {
    const answerOf = async (path: string) => {
      const route = app.routes.find((candidate) => candidate.method === 'get' && candidate.path === path)!;
      const result = await route.handler({} as Parameters<typeof route.handler>[0]);
      return (result as { body: OpenApiDocument }).body;
    };
    return { full: await answerOf('/openapi.json'), integrator: await answerOf('/openapi/integrator.json') };
  } finally {
    await app.close();
    await db.destroy();
  }
}

export type OpenApiDocument = Record<string, unknown>;
