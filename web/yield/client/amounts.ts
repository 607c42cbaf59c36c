/** "12.5" → 12500000000000000000n for 18 decimals; null for anything that is not a positive amount. */
export function parseAmount(text: string, decimals: number): bigint | null {
  const match = /^\s*(\d+)(?:\.(\d+))?\s*$/.exec(text);
  if (!match) return null;
  const fraction = match[2] ?? '';
  if (fraction.length > decimals) return null;
  const units = BigInt(match[1]! + fraction.padEnd(decimals, '0'));
  return units > 0n ? units : null;
}

/** Base units as "1,234.56" with `places` decimals, rounded down. */
export function formatAmount(units: bigint, decimals: number, places: number): string {
  const text = units.toString().padStart(decimals + 1, '0');
  const whole = text.slice(0, text.length - decimals).replace(/\B(?=(\d{3})+$)/g, ',');
  const fraction = text
    .slice(text.length - decimals)
    .padEnd(places, '0')
    .slice(0, places);
  return `${whole}.${fraction}`;
}
