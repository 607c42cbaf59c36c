import { settingRequired, type SettingCheck } from '../config';
import { webhookSecretKeyFromConfig } from '../webhooks/webhookSecrets';

/** What the worker process checks of its settings before it starts, all at once (config/index.ts). */
export const WORKER_SETTING_CHECKS: SettingCheck[] = [
  settingRequired('DATABASE_URL'),
  // It decrypts webhook secrets to sign deliveries.
  webhookSecretKeyFromConfig,
];
