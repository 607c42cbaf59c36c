import { z } from 'zod';

/** Largest chain id a query filter accepts: chain ids are stored as Postgres `integer`. */
export const MAX_STORED_CHAIN_ID = 2 ** 31 - 1;

/** An optional `chainId` query filter: a positive integer that fits the stored column (larger ones are 400, not 500). */
export const chainIdQuery = z.coerce
  .number({ error: 'must be a positive integer chain id' })
  .int('must be a positive integer chain id')
  .positive('must be a positive integer chain id')
  .max(MAX_STORED_CHAIN_ID, `must be at most ${MAX_STORED_CHAIN_ID}`)
  .optional();

/** A required `chainId` query parameter: absent answers 400 "chainId: is required", not a lookup of undefined. */
export const requiredChainIdQuery = z
  .string({ error: 'is required' })
  .pipe(
    z.coerce
      .number<string>({ error: 'must be a positive integer chain id' })
      .int('must be a positive integer chain id')
      .positive('must be a positive integer chain id')
      .max(MAX_STORED_CHAIN_ID, `must be at most ${MAX_STORED_CHAIN_ID}`),
  );
