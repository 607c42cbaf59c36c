import { createHash } from 'node:crypto';

/**
 * A UUID made from a name (SHA-256, version nibble 8, RFC 4122 variant): the same name gives the same id,
 * so a row or event keyed by it is written once however often its maker runs (a retried activity, a
 * request sent again). The names say what the id stands for (`subscription-event:…`, `period-session:…`).
 */
export function nameBasedUuid(name: string): string {
  const hex = createHash('sha256').update(name).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
