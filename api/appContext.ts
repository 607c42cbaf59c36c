import type { Config } from '../config';
import type { Client } from '@temporalio/client';
import type { NetworkRegistry } from '../chain/networkRegistry';
import type { PublicClients } from '../chain/publicClients';
import type { TaskQueueRole } from '../workflows/taskQueues';
import type { Db } from '../db/client';
import type { ChainFeeLevels } from '../chain/operationBounds';
import type { ChainClocks } from '../chain/chainClock';
import type { SponsorshipLimits } from '../paymaster/limits/limits';
import type { EthUsdPrices } from '../paymaster/pricing/prices';
import type { SignerClient } from '../paymaster/rpc/signerClient';
import type { ApiKeyLookups } from './auth/apiKeyCache';
import type { CachedLookups } from './auth/listenedCache';
import type { PaymasterClientRow } from '../db/paymasterClients';
import type { MerchantPaymasterConfig } from '../db/paymasterMerchantConfig';
import type { EmailCodes } from './auth/emailCodes';
import type { MerchantTokenService } from './auth/merchantTokens';
import type { Mailer } from '../mail/mailer';
import type { Logger } from '../logging/logger';
import type { SessionRevocationChecks } from './auth/sessionRevocations';
import type { WebhookSecretBox } from '../webhooks/webhookSecrets';
import type { RequestRates } from './requestRateLeases';

/** Everything route handlers may use, built once per app. */
export interface AppContext {
  config: Config;
  db: Db;
  logger: Logger;
  tokens: MerchantTokenService;
  publicClients: PublicClients;
  networks: NetworkRegistry;
  /** Temporal client over a lazy connection: nothing connects until a workflow is started. */
  temporal: Client;
  taskQueues: Record<TaskQueueRole, string>;
  /** The paymaster signing service (SIGNER_URL). */
  paymasterSigner: SignerClient;
  /** Sponsorship limits of the paymaster RPC, priced from the chains' ETH/USD feeds. */
  sponsorshipLimits: SponsorshipLimits;
  /** One-time e-mail codes (login, e-mail verification), stored as an HMAC. */
  emailCodes: EmailCodes;
  /** Sends e-mail through SMTP_URL after the request; `configured` is false without one. */
  mailer: Mailer;
  /** The chains' fresh ETH/USD prices (the sponsorship limits' and the vault deploy charge's). */
  ethUsdPrices: EthUsdPrices;
  /** The chains' current gas fees, which the fees of signed operations (and vault deploys) are bounded by. */
  chainFees: ChainFeeLevels;
  /** The chains' latest block times, which sponsorship policies' budget periods start by. */
  chainClocks: ChainClocks;
  /** Encrypts webhook signing secrets for storage (WEBHOOK_SECRET_ENCRYPTION_KEY). */
  webhookSecrets: WebhookSecretBox;
  /** sk_ key lookups by hash, cached and invalidated through LISTEN/NOTIFY (api/auth/apiKeyCache.ts). */
  apiKeys: ApiKeyLookups;
  /** Active paymaster clients by publishable id, cached and invalidated through LISTEN/NOTIFY (migration 990). */
  paymasterClients: CachedLookups<PaymasterClientRow>;
  /**
   * A merchant's paymaster configuration (deny rules, allowlist, limits, policies) by merchant id, cached
   * and invalidated through LISTEN/NOTIFY (migration 2026_11_29_0900); routes that change it invalidate.
   */
  paymasterConfigs: CachedLookups<MerchantPaymasterConfig>;
  /** Signed-out session tokens, kept current by LISTEN/NOTIFY beside the API-key cache. */
  sessionRevocations: SessionRevocationChecks;
  /** The service-wide request rates (per client IP, paymaster client, merchant), counted in Postgres. */
  requestRates: RequestRates;
  /** Records that a session's workflow started (batched: api/sessions/workflowStartMarks.ts). */
  markWorkflowStarted: (sessionId: string) => Promise<void>;
  /** The current time; tests inject a fixed or moving clock instead of sleeping. */
  now: () => Date;
}
