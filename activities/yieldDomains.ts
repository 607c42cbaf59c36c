import {
  failPendingYieldDomain,
  findYieldDomainById,
  releaseVerifiedYieldDomain,
  verifyYieldDomain,
} from '../db/yieldDomains';
import type { Db } from '../db/client';
import { verificationRecordName } from '../yield/domainVerification';
import type { TxtLookup } from '../yield/txtRecords';

/** Custom-domain verification: does the hostname publish the TXT value we issued, and does it still? */

export type DomainCheck = 'verified' | 'pending' | 'gone';

/** A verified domain's re-check: its record is still there, is missing now, or the domain is no longer verified. */
export type DomainRecheck = 'present' | 'absent' | 'gone';

export interface YieldDomainActivities {
  checkDomainVerification(input: { domainId: string }): Promise<DomainCheck>;
  failDomainVerification(input: { domainId: string }): Promise<void>;
  recheckVerifiedDomain(input: { domainId: string }): Promise<DomainRecheck>;
  /** Releases a verified domain whose record lapsed past the grace period: true when it was released now. */
  releaseLapsedDomain(input: { domainId: string }): Promise<boolean>;
}

export function createYieldDomainActivities({
  db,
  lookupTxt,
}: {
  db: Db;
  lookupTxt: TxtLookup;
}): YieldDomainActivities {
  return {
    async checkDomainVerification({ domainId }) {
      const domain = await findYieldDomainById(db, domainId);
      if (!domain || domain.status === 'failed') return 'gone';
      if (domain.status === 'verified') return 'verified';
      const records = await lookupTxt(verificationRecordName(domain.hostname));
      if (!records.includes(domain.verification_value)) return 'pending';
      const verified = await verifyYieldDomain(db, domainId);
      // Another merchant's verified domain holds the hostname: keep checking until it lapses or 7 days pass.
      if (verified === 'held') return 'pending';
      return verified ? 'verified' : 'gone';
    },
    async failDomainVerification({ domainId }) {
      await failPendingYieldDomain(db, domainId);
    },
    async recheckVerifiedDomain({ domainId }) {
      const domain = await findYieldDomainById(db, domainId);
      if (!domain || domain.status !== 'verified') return 'gone';
      const records = await lookupTxt(verificationRecordName(domain.hostname));
      return records.includes(domain.verification_value) ? 'present' : 'absent';
    },
    async releaseLapsedDomain({ domainId }) {
      return (await releaseVerifiedYieldDomain(db, domainId)) !== undefined;
    },
  };
}
