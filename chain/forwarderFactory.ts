import {
  type Account,
  type Address,
  type Chain,
  type Client,
  type Hex,
  type Transport,
  encodeAbiParameters,
  getAddress,
  getContractAddress,
} from 'viem';
import { readContract, waitForTransactionReceipt, writeContract } from 'viem/actions';
import { CappedForwarderFactory, ForwarderFactory } from '../contracts/artifacts';
import { deployDeterministic, deterministicDeploymentAddress } from './deterministicDeployer';

/** Salt of the ForwarderFactory deployment through the deterministic deployer (the same on every chain). */
export const FORWARDER_FACTORY_SALT: Hex =
  '0x0000000000000000000000000000000000000000000000000000000000000000';

export interface ForwarderFactoryAddresses {
  forwarderFactory: Address;
  /** The Forwarder the factory creates in its constructor (CREATE from the factory at nonce 1). */
  forwarderImplementation: Address;
  /**
   * The CappedForwarderFactory beside it (deposit addresses of sessions that hold an overpayment), deployed
   * through the deterministic deployer with `forwarderFactory` as its constructor argument, and its implementation.
   */
  cappedForwarderFactory: Address;
  cappedForwarderImplementation: Address;
}

export interface ForwarderFactoryIdentity {
  /** May change the settlement configuration; the same owner on every chain gives the same address everywhere. */
  owner: Address;
}

/**
 * A chain's settlement configuration as `ForwarderFactory.settlement()` holds it: who may flush, and the
 * router, tokens, vault and messenger a flush goes through (contracts/interfaces/IForwarderFactory.sol).
 */
export interface ForwarderSettlement {
  operator: Address;
  swapRouter: Address;
  usde: Address;
  stakedUsde: Address;
  messenger: Address;
  settlementChainId: bigint;
  settlementComposer: Address;
  maxSlippageBps: number;
}

function initCode({ owner }: ForwarderFactoryIdentity): Hex {
  const args = encodeAbiParameters([{ type: 'address' }], [owner]);
  return `${ForwarderFactory.bytecode}${args.slice(2)}` as Hex;
}

/** The CappedForwarderFactory's init code: it reads its settlement configuration from `base`. */
function cappedInitCode(base: Address): Hex {
  const args = encodeAbiParameters([{ type: 'address' }], [base]);
  return `${CappedForwarderFactory.bytecode}${args.slice(2)}` as Hex;
}

/** Where the ForwarderFactory of `owner` built from this checkout's sources lives, on every chain. */
export function forwarderFactoryAddresses(owner: Address): ForwarderFactoryAddresses {
  const forwarderFactory = deterministicDeploymentAddress({
    initCode: initCode({ owner }),
    salt: FORWARDER_FACTORY_SALT,
  });
  const cappedForwarderFactory = deterministicDeploymentAddress({
    initCode: cappedInitCode(forwarderFactory),
    salt: FORWARDER_FACTORY_SALT,
  });
  return {
    forwarderFactory,
    forwarderImplementation: getContractAddress({ opcode: 'CREATE', from: forwarderFactory, nonce: 1n }),
    cappedForwarderFactory,
    cappedForwarderImplementation: getContractAddress({
      opcode: 'CREATE',
      from: cappedForwarderFactory,
      nonce: 1n,
    }),
  };
}

/**
 * Deploys the ForwarderFactory of `owner` and the CappedForwarderFactory beside it (each when absent) and returns
 * their addresses and their implementations'.
 */
export async function deployForwarderFactory(
  client: Client<Transport, Chain, Account>,
  { owner }: ForwarderFactoryIdentity,
): Promise<ForwarderFactoryAddresses> {
  const expected = forwarderFactoryAddresses(owner);
  const forwarderFactory = await deployDeterministic(client, {
    initCode: initCode({ owner }),
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
  const cappedForwarderFactory = await deployDeterministic(client, {
    initCode: cappedInitCode(forwarderFactory),
    salt: FORWARDER_FACTORY_SALT,
  });
  return {
    forwarderFactory,
    forwarderImplementation,
    cappedForwarderFactory,
    cappedForwarderImplementation: expected.cappedForwarderImplementation,
  };
}

/** The factory's current settlement configuration (all zero until its owner sets one). */
export async function readForwarderSettlement(
  client: Client,
  { forwarderFactory }: { forwarderFactory: Address },
): Promise<ForwarderSettlement> {
  const settlement = await readContract(client, {
    address: forwarderFactory,
    abi: ForwarderFactory.abi,
    functionName: 'settlement',
  });
  return { ...settlement };
}

/**
 * Makes the factory's settlement configuration equal `settlement`, sending `setSettlement` only when it
 * differs; answers whether it sent one. `client`'s account must be the factory's owner.
 */
export async function configureForwarderSettlement(
  client: Client<Transport, Chain, Account>,
  { forwarderFactory, settlement }: { forwarderFactory: Address; settlement: ForwarderSettlement },
): Promise<boolean> {
  const current = await readForwarderSettlement(client, { forwarderFactory });
  if (sameSettlement(current, settlement)) return false;
  const hash = await writeContract(client, {
    address: forwarderFactory,
    abi: ForwarderFactory.abi,
    functionName: 'setSettlement',
    args: [settlement],
  });
  const receipt = await waitForTransactionReceipt(client, { hash });
  if (receipt.status !== 'success')
    throw new Error(`setSettlement on ${forwarderFactory} reverted (${hash})`);
  return true;
}

function sameSettlement(a: ForwarderSettlement, b: ForwarderSettlement): boolean {
  const addresses = [
    'operator',
    'swapRouter',
    'usde',
    'stakedUsde',
    'messenger',
    'settlementComposer',
  ] as const;
  return (
    addresses.every((key) => getAddress(a[key]) === getAddress(b[key])) &&
    a.settlementChainId === b.settlementChainId &&
    a.maxSlippageBps === b.maxSlippageBps
  );
}
