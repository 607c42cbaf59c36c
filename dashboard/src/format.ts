/** Numbers for people: exact amounts (strings and bigints, never floats), relative times, chain names. */

import { NETWORKS } from '../../config/networks';
import { fromBaseUnits } from '../../money/baseUnits';

/**
 * Chain names from the service's one list of networks (config/networks.ts), the one the checkout page and
 * the yield site name chains by, so a chain reads the same everywhere.
 */
export function chainName(chainId: number): string {
  return NETWORKS.find((network) => network.chainId === chainId)?.displayName ?? `Chain ${chainId}`;
}

/** Each network's public block explorer, for a transaction's link (a link the merchant follows, not a request the page makes). */
const EXPLORERS: Record<number, string> = {
  1: 'https://etherscan.io',
  8453: 'https://basescan.org',
  42161: 'https://arbiscan.io',
  11155111: 'https://sepolia.etherscan.io',
  84532: 'https://sepolia.basescan.org',
  421614: 'https://sepolia.arbiscan.io',
};

/** A transaction's page on its chain's explorer, or undefined for a chain without one (a local chain). */
export function explorerTxUrl(chainId: number, txHash: string): string | undefined {
  const explorer = EXPLORERS[chainId];
  return explorer && `${explorer}/tx/${txHash}`;
}

export const KNOWN_CHAINS = NETWORKS.map((network) => ({ id: network.chainId, name: network.displayName }));

/** Token base units as a decimal string, trailing zeros trimmed to at least two decimals. */
export function formatUnits(baseUnits: string | bigint, decimals: number): string {
  const [signedWhole = '0', fraction = ''] = fromBaseUnits(BigInt(baseUnits), decimals).split('.');
  const negative = signedWhole.startsWith('-');
  const whole = groupThousands(negative ? signedWhole.slice(1) : signedWhole);
  return `${negative ? '-' : ''}${whole}${decimals > 0 ? `.${fraction.padEnd(2, '0')}` : ''}`;
}

/** A decimal string (e.g. "1234.5") grouped for reading, its digits untouched: "1,234.5". */
export function formatDecimal(value: string): string {
  const [whole = '0', fraction] = value.split('.');
  const sign = whole.startsWith('-') ? '-' : '';
  const grouped = groupThousands(whole.replace('-', ''));
  return `${sign}${grouped}${fraction !== undefined ? `.${fraction}` : ''}`;
}

/** USD for people: at least two decimals, trailing zeros past them dropped (the API gives up to six). */
export function formatUsd(value: string): string {
  const [whole = '0', fraction = ''] = value.split('.');
  const trimmed = fraction.replace(/0+$/, '').padEnd(2, '0');
  const sign = whole.startsWith('-') ? '-' : '';
  return `${sign}$${formatDecimal(`${whole.replace('-', '')}.${trimmed}`)}`;
}

function groupThousands(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

export function relativeTime(iso: string, now = Date.now()): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === 'second') {
      return relative.format(Math.trunc(seconds / size), unit);
    }
  }
  return iso;
}

export function absoluteTime(iso: string): string {
  return (
    new Date(iso).toLocaleString('en-GB', { timeZone: 'UTC', dateStyle: 'medium', timeStyle: 'short' }) +
    ' UTC'
  );
}

export function shortAddress(address: string): string {
  return address.length > 12 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address;
}

/** Exact sum of decimal strings (bigint at the longest fraction given), as a decimal string. */
export function sumDecimals(values: string[]): string {
  const scale = Math.max(0, ...values.map((value) => value.split('.')[1]?.length ?? 0));
  const toUnits = (value: string) => {
    const negative = value.startsWith('-');
    const [whole = '0', fraction = ''] = value.replace('-', '').split('.');
    const units = BigInt(whole + fraction.padEnd(scale, '0'));
    return negative ? -units : units;
  };
  const total = values.reduce((sum, value) => sum + toUnits(value), 0n);
  const negative = total < 0n;
  const digits = (negative ? -total : total).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale);
  return `${negative ? '-' : ''}${whole}${scale ? `.${fraction}` : ''}`;
}

/** Wei as ETH for reading (exact digits, trimmed). */
export function formatWei(wei: string): string {
  return `${formatUnits(wei, 18)} ETH`;
}
