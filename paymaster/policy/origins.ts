/**
 * Browser origins as clients configure them and as the Origin header sends them, normalised to
 * `scheme://host[:port]` (lower-case host, default port dropped) so comparison is exact string equality.
 */

/** The normalised origin, or undefined when `value` is not an http(s) origin (a path, query or credentials make it one no longer). */
export function normaliseOrigin(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username || url.password || url.search || url.hash) return undefined;
  if (url.pathname !== '/') return undefined;
  return url.origin;
}
