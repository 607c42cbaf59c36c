import { z } from 'zod';

/**
 * Cursors of newest-first lists paged by insertion sequence (an INT8 column): the position of the
 * previous page's last row, tagged per list and base64url-encoded. New rows never shift a page, and a
 * cursor of one list is refused by another.
 */
const MAX_INT8 = (1n << 63n) - 1n;

export function sequenceCursor(tag: string, { listName }: { listName: string }) {
  const pattern = new RegExp(`^${tag}:(\\d{1,19})$`);
  const decode = (cursor: string): string | undefined => {
    const seq = pattern.exec(Buffer.from(cursor, 'base64url').toString('utf8'))?.[1];
    return seq !== undefined && BigInt(seq) <= MAX_INT8 ? seq : undefined;
  };
  const encode = (seq: string) => Buffer.from(`${tag}:${seq}`).toString('base64url');
  return {
    /** The optional `cursor` query parameter, decoded to the sequence it points after. */
    query: z
      .string()
      .refine((cursor) => decode(cursor) !== undefined, `must be a nextCursor of this ${listName}`)
      .transform((cursor) => decode(cursor)!)
      .optional(),
    /** A page's `nextCursor`: after its last row while more follow, else null. */
    next: (rows: readonly { seq: string }[], hasMore: boolean): string | null =>
      hasMore && rows.length > 0 ? encode(rows[rows.length - 1]!.seq) : null,
  };
}
