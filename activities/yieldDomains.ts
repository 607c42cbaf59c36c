import { findYieldDomainById, settleYieldDomain } from '../db/yieldDomains';
import type { Db } from '../db/client';
import { verificationRecordName } from '../yield/domainVerification';
import type { TxtLookup } from '../yield/txtRecords';

/** Custom-domain verification: does the hostname publish the TXT value we issued? */

export type DomainCheck = 'verified' | 'pending' | 'gone';

export interface YieldDomainActivities {
  checkDomainVerification(input: { domainId: string }): Promise<DomainCheck>;
  failDomainVerification(input: { domainId: string }): Promise<void>;
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
      return (await settleYieldDomain(db, domainId, 'verified')) ? 'verified' : 'gone';
    },
    async failDomainVerification({ domainId }) {
      await settleYieldDomain(db, domainId, 'failed');
    },
  };
}
