import type { Migration } from 'kysely';
import * as merchantAccounts from './2026_11_22_001_merchant_accounts';
import * as paymentSessions from './2026_11_22_002_payment_sessions';
import * as paymaster from './2026_11_22_010_paymaster';
import * as webhooks from './2026_11_22_020_webhooks';
import * as settlement from './2026_11_22_030_settlement';
import * as paymasterLimits from './2026_11_22_040_paymaster_limits';
import * as paymasterReceipts from './2026_11_22_050_paymaster_receipts';
import * as gasCharges from './2026_11_22_060_gas_charges';
import * as topups from './2026_11_22_070_topups';
import * as billingStatements from './2026_11_22_080_billing_statements';
import * as limitCountersFunction from './2026_11_22_090_limit_counters_function';
import * as settlementMoneySafety from './2026_11_24_100_settlement_money_safety';
import * as depositWatchIndexes from './2026_11_24_101_deposit_watch_indexes';
import * as emailLogin from './2026_11_24_300_email_login';
import * as prepaidBalances from './2026_11_24_200_prepaid_balances';
import * as uniqueSignedOperations from './2026_11_24_201_unique_signed_operations';
import * as sponsorshipHolds from './2026_11_24_202_sponsorship_holds';
import * as yieldDeployments from './2026_11_25_400_yield_deployments';
import * as webhookRedispatchCounters from './2026_11_25_500_webhook_redispatch_counters';
import * as recordSignedOperation from './2026_11_26_600_record_signed_operation';
import * as apiKeyNotifications from './2026_11_26_610_api_key_notifications';
import * as paymasterUsageWindowIndex from './2026_11_26_630_paymaster_usage_window_index';
import * as paymentOptionsWatchCoveringIndex from './2026_11_26_631_payment_options_watch_covering_index';
import * as emailLoginLockouts from './2026_11_26_640_email_login_lockouts';
import * as yieldDomainClaims from './2026_11_26_650_yield_domain_claims';
import * as sessionTokenRevocations from './2026_11_26_660_session_token_revocations';
import * as webhookDeliveryOperations from './2026_11_26_800_webhook_delivery_operations';
import * as paymasterMalformedRequests from './2026_11_26_810_paymaster_malformed_requests';
import * as paymasterUsageCallerText from './2026_11_26_811_paymaster_usage_caller_text';
import * as failingEndpoints from './2026_11_26_820_failing_endpoints';
import * as completedSessionsAreFinal from './2026_11_26_861_completed_sessions_are_final';
import * as yieldDeployLimits from './2026_11_26_862_yield_deploy_limits';
import * as paymasterClientUserPaidCap from './2026_11_26_900_paymaster_client_user_paid_cap';
import * as sessionLifecycleEvents from './2026_11_26_930_session_lifecycle_events';
import * as requestRateBuckets from './2026_11_26_950_request_rate_buckets';
import * as oneHoldRowPerOperation from './2026_11_26_960_one_hold_row_per_operation';
import * as depositsDropUnsettledIndex from './2026_11_26_965_deposits_drop_unsettled_index';
import * as webhookDeliveriesEventIndex from './2026_11_26_970_webhook_deliveries_event_index';
import * as paymentOptionsSessionExpiry from './2026_11_27_980_payment_options_session_expiry';
import * as paymasterClientNotifications from './2026_11_27_990_paymaster_client_notifications';
import * as dashboardSignInCodes from './2026_11_28_1010_dashboard_sign_in_codes';
import * as yieldDeployBudget from './2026_11_28_1020_yield_deploy_budget';
import * as endpointTestEvents from './2026_11_28_1040_endpoint_test_events';
import * as lateDepositEvents from './2026_11_28_1100_late_deposit_events';
import * as paymasterPolicies from './2026_11_28_1200_paymaster_policies';
import * as usagePolicyId from './2026_11_28_1201_usage_policy_id';
import * as subscriptionPlans from './2026_11_28_1500_subscription_plans';
import * as subscriptions from './2026_11_28_1510_subscriptions';
import * as subscriptionCharging from './2026_11_28_1520_subscription_charging';
import * as refunds from './2026_11_28_1600_refunds';
import * as refundEvents from './2026_11_28_1601_refund_events';
import * as refundForwarderRelay from './2026_11_29_0100_refund_forwarder_relay';
import * as sessionRefundAddress from './2026_11_29_0101_session_refund_address';
import * as subscriptionManageTokens from './2026_11_29_0300_subscription_manage_tokens';
import * as subscriptionGasCharges from './2026_11_29_0301_subscription_gas_charges';
import * as paymentOptionsWatchStamp from './2026_11_29_0550_payment_options_watch_stamp';
import * as sessionOverpayment from './2026_11_29_0600_session_overpayment';
import * as subscriptionChargeClaims from './2026_11_29_0700_subscription_charge_claims';
import * as paymasterConfigNotifications from './2026_11_29_0900_paymaster_config_notifications';
import * as signedRepeatInRecord from './2026_11_29_0901_signed_repeat_in_record';
import * as recordSignedOperationsBatch from './2026_11_30_0100_record_signed_operations_batch';
import * as recordSignedWithoutSubtransactions from './2026_12_01_0100_record_signed_without_subtransactions';
import * as rowChecksWithoutReparsing from './2026_12_02_0100_row_checks_without_reparsing';
import * as recordSignedRowsPerBatch from './2026_12_03_0100_record_signed_rows_per_batch';
import * as batchExpiryBoundedByNow from './2026_12_04_0100_batch_expiry_bounded_by_now';

/** Every migration, keyed by its ordered name. Add new files here; never edit one that has shipped. */
export const migrations: Record<string, Migration> = {
  '2026_11_22_001_merchant_accounts': merchantAccounts,
  '2026_11_22_002_payment_sessions': paymentSessions,
  '2026_11_22_010_paymaster': paymaster,
  '2026_11_22_020_webhooks': webhooks,
  '2026_11_22_030_settlement': settlement,
  '2026_11_22_040_paymaster_limits': paymasterLimits,
  '2026_11_22_050_paymaster_receipts': paymasterReceipts,
  '2026_11_22_060_gas_charges': gasCharges,
  '2026_11_22_070_topups': topups,
  '2026_11_22_080_billing_statements': billingStatements,
  '2026_11_22_090_limit_counters_function': limitCountersFunction,
  '2026_11_24_100_settlement_money_safety': settlementMoneySafety,
  '2026_11_24_101_deposit_watch_indexes': depositWatchIndexes,
  '2026_11_24_200_prepaid_balances': prepaidBalances,
  '2026_11_24_201_unique_signed_operations': uniqueSignedOperations,
  '2026_11_24_202_sponsorship_holds': sponsorshipHolds,
  '2026_11_24_300_email_login': emailLogin,
  '2026_11_25_400_yield_deployments': yieldDeployments,
  '2026_11_25_500_webhook_redispatch_counters': webhookRedispatchCounters,
  '2026_11_26_600_record_signed_operation': recordSignedOperation,
  '2026_11_26_610_api_key_notifications': apiKeyNotifications,
  '2026_11_26_630_paymaster_usage_window_index': paymasterUsageWindowIndex,
  '2026_11_26_631_payment_options_watch_covering_index': paymentOptionsWatchCoveringIndex,
  '2026_11_26_640_email_login_lockouts': emailLoginLockouts,
  '2026_11_26_650_yield_domain_claims': yieldDomainClaims,
  '2026_11_26_660_session_token_revocations': sessionTokenRevocations,
  '2026_11_26_800_webhook_delivery_operations': webhookDeliveryOperations,
  '2026_11_26_810_paymaster_malformed_requests': paymasterMalformedRequests,
  '2026_11_26_811_paymaster_usage_caller_text': paymasterUsageCallerText,
  '2026_11_26_820_failing_endpoints': failingEndpoints,
  '2026_11_26_861_completed_sessions_are_final': completedSessionsAreFinal,
  '2026_11_26_862_yield_deploy_limits': yieldDeployLimits,
  '2026_11_26_900_paymaster_client_user_paid_cap': paymasterClientUserPaidCap,
  '2026_11_26_930_session_lifecycle_events': sessionLifecycleEvents,
  '2026_11_26_950_request_rate_buckets': requestRateBuckets,
  '2026_11_26_960_one_hold_row_per_operation': oneHoldRowPerOperation,
  '2026_11_26_965_deposits_drop_unsettled_index': depositsDropUnsettledIndex,
  '2026_11_26_970_webhook_deliveries_event_index': webhookDeliveriesEventIndex,
  '2026_11_27_980_payment_options_session_expiry': paymentOptionsSessionExpiry,
  '2026_11_27_990_paymaster_client_notifications': paymasterClientNotifications,
  '2026_11_28_1010_dashboard_sign_in_codes': dashboardSignInCodes,
  '2026_11_28_1020_yield_deploy_budget': yieldDeployBudget,
  '2026_11_28_1040_endpoint_test_events': endpointTestEvents,
  '2026_11_28_1100_late_deposit_events': lateDepositEvents,
  '2026_11_28_1200_paymaster_policies': paymasterPolicies,
  '2026_11_28_1201_usage_policy_id': usagePolicyId,
  '2026_11_28_1500_subscription_plans': subscriptionPlans,
  '2026_11_28_1510_subscriptions': subscriptions,
  '2026_11_28_1520_subscription_charging': subscriptionCharging,
  '2026_11_28_1600_refunds': refunds,
  '2026_11_28_1601_refund_events': refundEvents,
  '2026_11_29_0100_refund_forwarder_relay': refundForwarderRelay,
  '2026_11_29_0101_session_refund_address': sessionRefundAddress,
  '2026_11_29_0300_subscription_manage_tokens': subscriptionManageTokens,
  '2026_11_29_0301_subscription_gas_charges': subscriptionGasCharges,
  '2026_11_29_0550_payment_options_watch_stamp': paymentOptionsWatchStamp,
  '2026_11_29_0600_session_overpayment': sessionOverpayment,
  '2026_11_29_0700_subscription_charge_claims': subscriptionChargeClaims,
  '2026_11_29_0900_paymaster_config_notifications': paymasterConfigNotifications,
  '2026_11_29_0901_signed_repeat_in_record': signedRepeatInRecord,
  '2026_11_30_0100_record_signed_operations_batch': recordSignedOperationsBatch,
  '2026_12_01_0100_record_signed_without_subtransactions': recordSignedWithoutSubtransactions,
  '2026_12_02_0100_row_checks_without_reparsing': rowChecksWithoutReparsing,
  '2026_12_03_0100_record_signed_rows_per_batch': recordSignedRowsPerBatch,
  '2026_12_04_0100_batch_expiry_bounded_by_now': batchExpiryBoundedByNow,
};
