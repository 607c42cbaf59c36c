/**
 * One read per chain shared by everyone who asks within `reuseMs` (concurrent callers share the read in
 * flight), so a burst of paymaster requests costs one RPC round per chain. A failed read (undefined) is
 * not reused: the next caller reads again.
 */
export function shareChainReads<T>(
  read: (chainId: number) => Promise<T | undefined>,
  { reuseMs, now }: { reuseMs: number; now: () => number },
): (chainId: number) => Promise<T | undefined> {
  const recent = new Map<number, { at: number; reading: Promise<T | undefined> }>();
  return (chainId) => {
    const cached = recent.get(chainId);
    if (cached && now() - cached.at < reuseMs) return cached.reading;
    const reading = read(chainId);
    recent.set(chainId, { at: now(), reading });
    void reading.then((value) => {
      if (value === undefined && recent.get(chainId)?.reading === reading) recent.delete(chainId);
    });
    return reading;
  };
}
