/** What renderRefundClaimPage.ts hands the claim page's script in its `refund-claim-data` JSON block. */
export interface RefundClaimClientData {
  /** Where the address is submitted: `POST /v1/refund-claims/{token}`. */
  claimUrl: string;
  /** The stablecoin symbol the refund is paid in, for the summary's line once the network is chosen. */
  token: string;
  /** Display names by chain id, for the confirmation line. */
  networks: Record<string, string>;
}

export const REFUND_CLAIM_DATA_ELEMENT_ID = 'refund-claim-data';
