/**
 * How many rows a list answers per request: 1 to `max`, `default` when the query names none (SPEC
 * "Limits"). Static facts importing nothing, so the api's query parsing (api/routing/pageQuery.ts) and
 * the tool server's tool descriptions read the one table.
 */
export interface PageSize {
  max: number;
  default: number;
}

export const PAGE_SIZES = {
  /** Sessions, webhook deliveries, paymaster usage, gas charges, the overview's recent operations. */
  standard: { max: 100, default: 20 },
  /** The paymaster activity feed. */
  activity: { max: 200, default: 50 },
  /** A yield deployment's redeem requests (a page reads chain logs, so pages stay small). */
  redeemRequests: { max: 50, default: 20 },
} as const satisfies Record<string, PageSize>;

/** Offset-paged lists stop at this page, so the row offset stays a sane query (a page past the end is simply empty). */
export const MAX_PAGE_NUMBER = 1_000_000;

/** The page size as a tool or a document describes it: "1 to 100, default 20". */
export const pageSizeText = (size: PageSize): string => `1 to ${size.max}, default ${size.default}`;
