import { z } from 'zod';

/** A real calendar date "YYYY-MM-DD" → its 00:00 UTC; undefined for anything else (2026-02-30 too). */
export function utcDate(text: string): Date | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return undefined;
  const date = new Date(`${text}T00:00:00.000Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text ? date : undefined;
}

/** A query parameter naming a UTC date (`from`/`to` of the CSV exports): 400 with the field otherwise. */
export const utcDateQuery = z
  .string()
  .refine((text) => utcDate(text) !== undefined, 'must be a UTC date YYYY-MM-DD')
  .transform((text) => utcDate(text)!);

export const DAY_MS = 24 * 3600 * 1000;

/** Days from `from` to `to`, both included. */
export const daysIncluded = (from: Date, to: Date) => (to.getTime() - from.getTime()) / DAY_MS + 1;
