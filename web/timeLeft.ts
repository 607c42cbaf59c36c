/**
 * Time-left text, the one home of its wordings, shared by the server-rendered pages and every browser
 * bundle (it imports nothing): the checkout page's expiry countdown, clock style, and the yield site's
 * and the dashboard's time until a redeem request is claimable, in words.
 */

interface DurationParts {
  days: number;
  hours: number;
  minutes: number;
  seconds: number;
}

function durationParts(totalSeconds: number): DurationParts {
  return {
    days: Math.floor(totalSeconds / 86_400),
    hours: Math.floor((totalSeconds % 86_400) / 3600),
    minutes: Math.floor((totalSeconds % 3600) / 60),
    seconds: totalSeconds % 60,
  };
}

/**
 * The checkout countdown: `12:05` under an hour, `1:02:03` under a day, `2d 3h` beyond. The page renders
 * it server-side and its script (web/checkout/client/expiry.ts) ticks it live.
 */
export function formatTimeRemaining(milliseconds: number): string {
  const { days, hours, minutes, seconds } = durationParts(Math.max(0, Math.floor(milliseconds / 1000)));
  const two = (value: number) => String(value).padStart(2, '0');
  if (days > 0) return `${days}d ${hours}h`;
  if (hours > 0) return `${hours}:${two(minutes)}:${two(seconds)}`;
  return `${minutes}:${two(seconds)}`;
}

/**
 * A redeem request's time left in words: "6 d 23 h", "3 h 12 min", then to the second on the yield site
 * (which ticks every second: "4 min 10 s", "45 s") or to the started minute on the dashboard (which does
 * not: "5 min", never "0 min").
 */
export function formatTimeLeft(secondsLeft: number, precision: 'second' | 'minute'): string {
  const total = Math.max(0, Math.ceil(secondsLeft));
  const { days, hours, minutes, seconds } = durationParts(total);
  if (days > 0) return `${days} d ${hours} h`;
  if (hours > 0) return `${hours} h ${minutes} min`;
  if (precision === 'minute') return `${Math.max(1, Math.ceil(total / 60))} min`;
  if (minutes > 0) return `${minutes} min ${seconds} s`;
  return `${seconds} s`;
}
