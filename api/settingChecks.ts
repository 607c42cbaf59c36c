import { settingRequired, type SettingCheck } from '../config';
import { assertTreasuryConfigured } from '../billing/platformTreasury';
import { webhookSecretKeyFromConfig } from '../webhooks/webhookSecrets';
import { emailCodeHashKeyFromConfig } from './auth/emailCodes';

/**
 * What the api process checks of its settings before it starts, all at once (config/index.ts reports
 * every issue in one message): the same functions that read the keys, so the checks and the reads agree.
 */
export const API_SETTING_CHECKS: SettingCheck[] = [
  settingRequired('DATABASE_URL'),
  settingRequired('JWT_PRIVATE_JWK', { inProduction: true }),
  webhookSecretKeyFromConfig,
  emailCodeHashKeyFromConfig,
  assertTreasuryConfigured,
];
