import type { z } from 'zod';
import { badRequest, notFound } from '../httpErrors';

/** `field.path: problem; ...` — one line naming every invalid field. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => (issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
}

export function parseBody<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) throw badRequest(`Validation failed: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

export function parseQuery<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw badRequest(`Validation failed: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/** A path id that cannot exist (not a UUID, say) is simply not found: never a 400 that leaks shape, never a 500. */
export function parseParams<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw notFound();
  return parsed.data;
}
