import {
  type Account,
  type Address,
  type Chain,
  type Client,
  type Hex,
  type Transport,
  getContractAddress,
} from 'viem';
import { readContract } from 'viem/actions';
import { ForwarderFactory } from '../contracts/artifacts';
import { deployDeterministic, deterministicDeploymentAddress } from './deterministicDeployer';

/** Salt of the ForwarderFactory deployment through the deterministic deployer (the same on every chain). */
export const FORWARDER_FACTORY_SALT: Hex =
  '0x0000000000000000000000000000000000000000000000000000000000000000';

export interface ForwarderFactoryAddresses {
  forwarderFactory: Address;
  /** The Forwarder the factory creates in its constructor (CREATE from the factory at nonce 1). */
  forwarderImplementation: Address;
}

/** Where the ForwarderFactory built from this checkout's sources lives, on every chain. */
export function forwarderFactoryAddresses(): ForwarderFactoryAddresses {
  const forwarderFactory = deterministicDeploymentAddress({
    initCode: ForwarderFactory.bytecode,
    salt: FORWARDER_FACTORY_SALT,
  });
  return {
    forwarderFactory,
    forwarderImplementation: getContractAddress({ opcode: 'CREATE', from: forwarderFactory, nonce: 1n }),
  };
}

/** Deploys the ForwarderFactory (when absent) and returns its address and its implementation's. */
export async function deployForwarderFactory(
  client: Client<Transport, Chain, Account>,
): Promise<ForwarderFactoryAddresses> {
  const expected = forwarderFactoryAddresses();
  const forwarderFactory = await deployDeterministic(client, {
    initCode: ForwarderFactory.bytecode,
    salt: FORWARDER_FACTORY_SALT,
  });
  const forwarderImplementation = await readContract(client, {
    address: forwarderFactory,
    abi: ForwarderFactory.abi,
    functionName: 'implementation',
  });
  if (forwarderImplementation !== expected.forwarderImplementation) {
    throw new Error(
      `ForwarderFactory ${forwarderFactory} reports implementation ${forwarderImplementation}, expected ${expected.forwarderImplementation}`,
    );
  }
  return { forwarderFactory, forwarderImplementation };
}
