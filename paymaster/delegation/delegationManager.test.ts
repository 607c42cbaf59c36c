import { DELEGATOR_CONTRACTS } from '@metamask/delegation-deployments';
import type { Address } from 'viem';
import { DELEGATION_FRAMEWORK_VERSION, publishedDelegationFramework } from '../../chain/delegationFramework';
import { loadConfig } from '../../config';
import { delegationManagerFor } from './delegationManager';

const LOCAL: Address = '0x1111111111111111111111111111111111111111';
const CONFIGURED: Address = '0x2222222222222222222222222222222222222222';
const ON_BASE: Address = '0x3333333333333333333333333333333333333333';
const published = DELEGATOR_CONTRACTS[DELEGATION_FRAMEWORK_VERSION]!;
/** A deployments file's contracts that list the whole framework, at made-up addresses. */
const localFramework = Object.fromEntries(
  Object.keys(publishedDelegationFramework(1)!).map((key) => [
    key,
    key === 'delegationManager' ? LOCAL : ON_BASE,
  ]),
) as Record<string, Address>;

describe('the delegation manager of a chain', () => {
  it('is MetaMask’s published deployment (from @metamask/delegation-deployments) when nothing else names one', () => {
    const config = loadConfig({});
    for (const chainId of [1, 8453, 42161, 11155111, 84532, 421614]) {
      expect(delegationManagerFor(config, chainId)).toBe(published[chainId]!.DelegationManager);
    }
  });

  it('is the deployments file’s when it lists the framework (local chains)', () => {
    expect(delegationManagerFor(loadConfig({}), 84532, localFramework)).toBe(LOCAL);
    // A file that lists only some framework contracts does not replace the published deployment.
    expect(delegationManagerFor(loadConfig({}), 84532, { delegationManager: LOCAL })).toBe(
      published[84532]!.DelegationManager,
    );
  });

  it('is PAYMASTER_DELEGATION_MANAGER over the deployments, and PAYMASTER_DELEGATION_MANAGER_<chainId> over both', () => {
    const config = loadConfig({
      PAYMASTER_DELEGATION_MANAGER: CONFIGURED,
      PAYMASTER_DELEGATION_MANAGER_8453: ON_BASE,
    });
    expect(delegationManagerFor(config, 84532, localFramework)).toBe(CONFIGURED);
    expect(delegationManagerFor(config, 8453, localFramework)).toBe(ON_BASE);
  });
});
