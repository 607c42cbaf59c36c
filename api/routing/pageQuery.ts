import { z } from 'zod';
import { MAX_PAGE_NUMBER, PAGE_SIZES, type PageSize } from '../../config/pageSizes';

/**
 * The paging query parameters every list reads: `limit` (its page size, config/pageSizes.ts) and, for
 * offset-paged lists, `page`. Cursors are per list (api/routing/sequenceCursor.ts). A bad value answers
 * 400 naming the range ("limit: must be an integer from 1 to 100").
 */

const integerFromOne = (max: number) => {
  const message = `must be an integer from 1 to ${max}`;
  return z.coerce.number({ error: message }).int(message).min(1, message).max(max, message);
};

/** The `limit` query parameter of a list with `size`. */
export const pageLimit = (size: PageSize) => integerFromOne(size.max).default(size.default);

/** `limit` and `page` of an offset-paged list (sessions, webhook deliveries). */
export const offsetPageQuery = {
  limit: pageLimit(PAGE_SIZES.standard),
  page: integerFromOne(MAX_PAGE_NUMBER).default(1),
};
