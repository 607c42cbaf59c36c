import { Client, Connection } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { unregisteredSearchAttributes } from './searchAttributes';

export interface CreateTemporalClientOptions {
  /** Frontend `host:port`, e.g. `TEMPORAL_ADDRESS`. */
  address: string;
  namespace: string;
}

export interface TemporalClient {
  client: Client;
  connection: Connection;
  /** Closes the connection; the client is unusable afterwards. */
  close(): Promise<void>;
}

/** A connected Temporal client for starting, signalling and querying workflows (api, dev stack, tests). */
export async function createTemporalClient({
  address,
  namespace,
}: CreateTemporalClientOptions): Promise<TemporalClient> {
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace });
  return { client, connection, close: () => connection.close() };
}

/**
 * Registers our custom search attributes in the namespace when they are missing (a fresh cluster, as
 * in docker-compose); the dev server gets them at launch. Idempotent.
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = unregisteredSearchAttributes(
    Object.fromEntries(Object.entries(customAttributes ?? {}).map(([name, type]) => [name, Number(type)])),
  );
  if (missing.length === 0) return [];
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(
      missing.map(({ name, type }) => [name, encodeSearchAttributeIndexedValueType(type)!]),
    ),
  });
  return missing.map(({ name }) => name);
}
