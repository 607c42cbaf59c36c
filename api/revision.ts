import { execFileSync } from 'node:child_process';

/** The short commit id reported by /health: REVISION when set, else `git rev-parse --short HEAD`. */
export function resolveRevision(configured?: string): string {
  if (configured) return configured.slice(0, 12);
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: __dirname,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    // Outside a git checkout (e.g. a container image built without .git): report that honestly.
    return 'unknown';
  }
}
