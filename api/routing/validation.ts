import type { z } from 'zod';
import { notFound, validationFailed, type FieldError } from '../httpErrors';

/** Every invalid field as `{ field: 'dotted.path', message }` (`''` for the value as a whole). */
export function fieldErrorsOf(error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => ({ field: issue.path.join('.'), message: issue.message }));
}

export function parseBody<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) throw validationFailed(fieldErrorsOf(parsed.error));
  return parsed.data;
}

export function parseQuery<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw validationFailed(fieldErrorsOf(parsed.error));
  return parsed.data;
}

/** A path id that cannot exist (not a UUID, say) is simply not found: never a 400 that leaks shape, never a 500. */
export function parseParams<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw notFound();
  return parsed.data;
}
