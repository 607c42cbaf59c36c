import { settingRequired, type SettingCheck } from '../config';

/** What the signer process checks of its settings before it starts, all at once (config/index.ts). */
export const SIGNER_SETTING_CHECKS: SettingCheck[] = [
  settingRequired('SIGNER_PRIVATE_KEY'),
  settingRequired('SIGNER_SHARED_SECRET'),
];
