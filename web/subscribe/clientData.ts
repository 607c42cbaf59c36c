/**
 * What renderSubscribePage.ts hands the subscribe page's script in its `subscribe-data` JSON block: the
 * plan in words and figures, and each chain × stablecoin the customer may grant the permission on.
 */
export interface SubscribeOption {
  /** `<chainId>:<symbol>`: the option select's value. */
  key: string;
  chainId: number;
  network: string;
  symbol: string;
  tokenAddress: `0x${string}`;
  decimals: number;
  /** The plan's amount in the token's base units, decimal: exactly what a period may take. */
  periodAmount: string;
  /** The delegate the permission names: the platform's subscription executor on this chain. */
  executor: `0x${string}`;
  delegationManager: `0x${string}`;
  erc20PeriodTransferEnforcer: `0x${string}`;
}

export interface SubscribeClientData {
  planId: string;
  /** `POST /v1/subscribe/{planId}`. */
  subscribeUrl: string;
  merchantName: string;
  /** Decimal USD per period, as shown (`$10.00`). */
  amountLabel: string;
  /** The period in words: `month (30 days)`, `2 weeks`. */
  periodLabel: string;
  periodSeconds: number;
  /** The server's clock when it rendered the page: the permission starts by it, not the device's. */
  serverNow: string;
  trialDays: number;
  options: SubscribeOption[];
}

export const SUBSCRIBE_DATA_ELEMENT_ID = 'subscribe-data';

/** What renderManagePage.ts hands the manage page's script: where the cancelation is posted. */
export interface ManageClientData {
  /** `POST /v1/subscription-manage/{token}/cancel`. */
  cancelUrl: string;
}

export const MANAGE_DATA_ELEMENT_ID = 'subscription-manage-data';
