import { Resolver } from 'node:dns/promises';

/** Looks up TXT records through one DNS server (YIELD_DNS_SERVER), or the system's when none is given. */
export type TxtLookup = (name: string) => Promise<string[]>;

/** Answers that mean "no such record (yet)" rather than "could not ask". */
const ABSENT = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN']);

/** Each TXT record of `name` as one string (its character-strings joined), [] when there is none. */
export function createTxtLookup(server?: string): TxtLookup {
  const resolver = new Resolver({ timeout: 2_000, tries: 2 });
  if (server) resolver.setServers([server]);
  return async (name) => {
    try {
      return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
    } catch (error) {
      if (ABSENT.has((error as { code?: string }).code ?? '')) return [];
      throw error;
    }
  };
}
