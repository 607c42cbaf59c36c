import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';

/**
 * Custom domains of yield sites (docs/yield.md "4. Put the site on your own domain, step by step"): a merchant proves a hostname by publishing a TXT record
 * `_stablepay-verification.<hostname>` whose value we issued.
 */

export function verificationRecordName(hostname: string): string {
  return `_stablepay-verification.${hostname}`;
}

/** A fresh value to publish: `stablepay-verification=<32 hex>`. */
export function newVerificationValue(): string {
  return `stablepay-verification=${randomBytes(16).toString('hex')}`;
}

/**
 * The hostname as stored (lower-case, no trailing dot), or why it is not one: a DNS name of at least two
 * labels, each 1–63 letters, digits or hyphens not at either end, 253 characters at most; no IP address,
 * port, scheme or path.
 */
export function normalizeHostname(input: string): { hostname: string } | { problem: string } {
  const hostname = input.trim().toLowerCase().replace(/\.$/, '');
  if (/[/:@?#\s]/.test(hostname)) return { problem: 'must be a bare hostname (no scheme, port or path)' };
  if (isIP(hostname) || /^[0-9.]+$/.test(hostname))
    return { problem: 'must be a DNS name, not an IP address' };
  if (hostname.length > 253) return { problem: 'must be at most 253 characters' };
  const labels = hostname.split('.');
  if (labels.length < 2) return { problem: 'must have at least two labels (e.g. invest.example.com)' };
  const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
  if (!labels.every((part) => label.test(part))) {
    return {
      problem: 'each label must be 1-63 letters, digits or hyphens, not starting or ending with a hyphen',
    };
  }
  return { hostname };
}
