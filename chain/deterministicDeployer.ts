import {
  type Account,
  type Address,
  type Chain,
  type Client,
  type Hash,
  type Hex,
  type Transport,
  concat,
  getContractAddress,
} from 'viem';
import { getCode, sendTransaction, waitForTransactionReceipt } from 'viem/actions';
import { getAction } from 'viem/utils';

/**
 * The deterministic CREATE2 deployer (Nick Johnson's "Arachnid" proxy): calldata `salt ‖ init code`
 * creates the contract with CREATE2 from this address. anvil predeploys it; on public chains it
 * exists at the same address, so a contract with chain-independent init code lands at the same
 * address everywhere.
 */
export const DETERMINISTIC_DEPLOYER_ADDRESS: Address = '0x4e59b44847b379578588920cA78FbF26c0B4956C';

export interface DeployDeterministicParameters {
  /** Creation code followed by any ABI-encoded constructor arguments. */
  initCode: Hex;
  salt: Hex;
}

export type DeployDeterministicReturnType = Address;

/** There is no code at the deterministic deployer's address on this chain. */
export class DeterministicDeployerMissingError extends Error {
  override name = 'DeterministicDeployerMissingError';
  constructor(readonly chainId: number | undefined) {
    super(
      `The deterministic deployer ${DETERMINISTIC_DEPLOYER_ADDRESS} has no code on chain ${chainId ?? '(unknown)'}. ` +
        'anvil predeploys it; on other chains it must be deployed first from its presigned transaction ' +
        '(https://github.com/Arachnid/deterministic-deployment-proxy).',
    );
  }
}

/** The deployment transaction was mined but the contract is not there (reverted, or out of gas). */
export class DeterministicDeploymentFailedError extends Error {
  override name = 'DeterministicDeploymentFailedError';
  constructor(
    readonly address: Address,
    readonly transactionHash: Hash,
    status: string,
  ) {
    super(
      `Deterministic deployment to ${address} failed (transaction ${transactionHash}, status ${status}).`,
    );
  }
}

/** The address `deployDeterministic` deploys `initCode` with `salt` to, on any chain. */
export function deterministicDeploymentAddress({ initCode, salt }: DeployDeterministicParameters): Address {
  return getContractAddress({
    opcode: 'CREATE2',
    from: DETERMINISTIC_DEPLOYER_ADDRESS,
    salt,
    bytecode: initCode,
  });
}

/**
 * Deploys `initCode` through the deterministic deployer and returns the contract's address; when code
 * already exists there nothing is sent.
 */
export async function deployDeterministic(
  client: Client<Transport, Chain, Account>,
  { initCode, salt }: DeployDeterministicParameters,
): Promise<DeployDeterministicReturnType> {
  const address = deterministicDeploymentAddress({ initCode, salt });
  if (await hasCode(client, address)) return address;
  if (!(await hasCode(client, DETERMINISTIC_DEPLOYER_ADDRESS))) {
    throw new DeterministicDeployerMissingError(client.chain.id);
  }

  let hash: Hash;
  try {
    // Through the client's own sendTransaction (getAction), not viem's action directly: a client that
    // orders its sends (dev/chains/sendsInNonceOrder.ts) must see these too, or a wave of deployments
    // reaches the node out of nonce order.
    hash = await getAction(
      client,
      sendTransaction,
      'sendTransaction',
    )({
      account: client.account,
      chain: client.chain,
      to: DETERMINISTIC_DEPLOYER_ADDRESS,
      data: concat([salt, initCode]),
    });
  } catch (error) {
    // Someone else deployed it since we looked (gas estimation then reverts): that is the outcome we want.
    if (await hasCode(client, address)) return address;
    throw error;
  }
  const receipt = await waitForTransactionReceipt(client, { hash });
  // A concurrent deployment makes ours revert but still leaves the contract in place.
  if (!(await hasCode(client, address))) {
    throw new DeterministicDeploymentFailedError(address, hash, receipt.status);
  }
  return address;
}

async function hasCode(client: Client, address: Address): Promise<boolean> {
  const code = await getCode(client, { address });
  return code !== undefined && code !== '0x';
}
