import { sql, type Selectable } from 'kysely';
import type { Db } from './client';
import type { PaymasterClientsTable, PaymasterEnvironment, PaymasterGasMode } from './schema';

export type PaymasterClientRow = Selectable<PaymasterClientsTable>;

export interface NewPaymasterClient {
  merchantId: string;
  clientId: string;
  environment: PaymasterEnvironment;
  label: string;
  allowedOrigins: string[];
  allowedChainIds: number[];
  gasMode: PaymasterGasMode;
  /** Null: the platform default (PAYMASTER_USER_PAID_MAX_OPERATION_USD). */
  userPaidMaxOperationUsd?: string | null;
}

export async function insertPaymasterClient(db: Db, client: NewPaymasterClient): Promise<PaymasterClientRow> {
  return db
    .insertInto('paymaster_clients')
    .values({
      merchant_id: client.merchantId,
      client_id: client.clientId,
      environment: client.environment,
      label: client.label,
      allowed_origins: client.allowedOrigins,
      allowed_chain_ids: client.allowedChainIds,
      gas_mode: client.gasMode,
      user_paid_max_operation_usd: client.userPaidMaxOperationUsd ?? null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The merchant's clients that are not revoked, newest first. */
export async function listActivePaymasterClients(db: Db, merchantId: string): Promise<PaymasterClientRow[]> {
  return db
    .selectFrom('paymaster_clients')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
}

export interface PaymasterClientChanges {
  label?: string;
  allowedOrigins?: string[];
  allowedChainIds?: number[];
  gasMode?: PaymasterGasMode;
  /** Null restores the platform default. */
  userPaidMaxOperationUsd?: string | null;
}

/** Updates an active client of the merchant; undefined when there is none with that id. */
export async function updatePaymasterClient(
  db: Db,
  merchantId: string,
  id: string,
  changes: PaymasterClientChanges,
): Promise<PaymasterClientRow | undefined> {
  return db
    .updateTable('paymaster_clients')
    .set({
      ...(changes.label !== undefined && { label: changes.label }),
      ...(changes.allowedOrigins !== undefined && { allowed_origins: changes.allowedOrigins }),
      ...(changes.allowedChainIds !== undefined && { allowed_chain_ids: changes.allowedChainIds }),
      ...(changes.gasMode !== undefined && { gas_mode: changes.gasMode }),
      ...(changes.userPaidMaxOperationUsd !== undefined && {
        user_paid_max_operation_usd: changes.userPaidMaxOperationUsd,
      }),
      updated_at: sql`now()`,
    })
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Revokes an active client of the merchant; undefined when there is none (already revoked counts as none). */
export async function revokePaymasterClient(
  db: Db,
  merchantId: string,
  id: string,
): Promise<PaymasterClientRow | undefined> {
  return db
    .updateTable('paymaster_clients')
    .set({ revoked_at: sql`now()`, updated_at: sql`now()` })
    .where('id', '=', id)
    .where('merchant_id', '=', merchantId)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Where the paymaster_clients trigger (migration 990) announces a changed or deleted client (payload: its client id). */
export const PAYMASTER_CLIENT_CHANGES_CHANNEL = 'paymaster_client_changes';

/** The active client with this publishable id (the RPC's credential), through the unique index. */
export async function findActivePaymasterClient(
  db: Db,
  clientId: string,
): Promise<PaymasterClientRow | undefined> {
  return db
    .selectFrom('paymaster_clients')
    .selectAll()
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}
