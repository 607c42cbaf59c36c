/** numerator / denominator rounded up (both non-negative, denominator positive): charges never round in the payer's favour. */
export const ceilDiv = (numerator: bigint, denominator: bigint): bigint =>
  (numerator + denominator - 1n) / denominator;
