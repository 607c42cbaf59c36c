import { Client, Connection } from '@temporalio/client';

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
