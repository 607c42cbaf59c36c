import { Allowlist, DenyRules } from './paymaster/Policies';
import { Clients } from './paymaster/Clients';
import { Limits } from './paymaster/Limits';
import { SponsorshipPolicies } from './paymaster/SponsorshipPolicies';
import { Usage } from './paymaster/Usage';

/** The managed paymaster: clients, which contracts it sponsors, whom it refuses, limits and usage. */
export function Paymaster() {
  return (
    <>
      <Usage />
      <Clients />
      <SponsorshipPolicies />
      <Allowlist />
      <DenyRules />
      <Limits />
    </>
  );
}
