import type { ColumnType, Generated } from 'kysely';

/**
 * The typed truth of the schema. Each table interface matches its migration; repositories
 * (db/<aggregate>.ts) are the only code that queries these tables.
 */

/** timestamptz: read as Date, written as Date or ISO string, defaulted by the database. */
export type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface MerchantsTable {
  id: Generated<string>;
  /** Lower-case login wallet address: the account key. */
  wallet_address: string;
  name: string | null;
  email: string | null;
  /** Checksummed address that receives settlement; defaults to the login wallet. */
  payout_address: string;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface LoginNoncesTable {
  nonce: string;
  address: string;
  chain_id: number;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
  created_at: CreatedAt;
}

export interface ApiKeysTable {
  id: Generated<string>;
  merchant_id: string;
  label: string | null;
  /** First characters of the raw key, shown in listings so a merchant can tell keys apart. */
  prefix: string;
  /** Hex SHA-256 of the raw key; the raw key itself is never stored. */
  key_hash: string;
  created_at: CreatedAt;
  revoked_at: NullableTimestamp;
  last_used_at: NullableTimestamp;
}

export interface SmartAccountsTable {
  /** Lower-case address; the primary key makes a second claim fail atomically. */
  address: string;
  merchant_id: string;
  created_at: CreatedAt;
}

export interface Database {
  merchants: MerchantsTable;
  login_nonces: LoginNoncesTable;
  api_keys: ApiKeysTable;
  smart_accounts: SmartAccountsTable;
}
