import type { Config } from '../config';
import type { PublicClients } from '../chain/publicClients';
import type { Db } from '../db/client';
import type { MerchantTokenService } from './auth/merchantTokens';
import type { Logger } from './logger';

/** Everything route handlers may use, built once per app. */
export interface AppContext {
  config: Config;
  db: Db;
  logger: Logger;
  tokens: MerchantTokenService;
  publicClients: PublicClients;
  /** The current time; tests inject a fixed or moving clock instead of sleeping. */
  now: () => Date;
}
