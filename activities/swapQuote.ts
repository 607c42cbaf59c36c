import { rescaleUnitsRoundingDown } from '../money/baseUnits';
import { USDE_DECIMALS } from './settlementSteps';

/** Headroom on the quoted bridge fee, in basis points: the quote can rise before the flush is mined; the endpoint refunds the surplus to the operator. */
export const BRIDGE_FEE_MARGIN_BPS = 2_000n;

/** USDe base units the stablecoin amount is worth at parity, less the allowed slippage (rounded down). */
export function quoteMinUsdeOut(amountIn: bigint, tokenDecimals: number, slippageBps: number): bigint {
  const atParity = rescaleUnitsRoundingDown(amountIn, tokenDecimals, USDE_DECIMALS);
  return (atParity * BigInt(10_000 - slippageBps)) / 10_000n;
}

/** The native value a flush sends: the messenger's quoted bridge fee plus the margin (0 on the settlement chain). */
export function bridgeFeeWithMargin(bridgeFee: bigint): bigint {
  return bridgeFee + (bridgeFee * BRIDGE_FEE_MARGIN_BPS) / 10_000n;
}
