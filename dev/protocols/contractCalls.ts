import {
  type Abi,
  type Account,
  type Address,
  type Chain,
  type Client,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type Hex,
  type Transport,
  encodeAbiParameters,
  keccak256,
  toHex,
} from 'viem';
import {
  deployContract,
  estimateContractGas,
  simulateContract,
  waitForTransactionReceipt,
  writeContract,
} from 'viem/actions';

/** The deployer's client on a local chain (anvil dev account 0, its own nonce manager). */
export type DeployerClient = Client<Transport, Chain, Account>;

/** Salt of a real-protocol deployment through the deterministic deployer. */
export const realSaltOf = (name: string): Hex => keccak256(toHex(`stablepay.local.real.${name}`));

/** Creation code followed by ABI-encoded constructor arguments. */
export function initCodeOf(bytecode: Hex, types: string[], values: unknown[]): Hex {
  const encoded = encodeAbiParameters(
    types.map((type) => ({ type })),
    values,
  );
  return `${bytecode}${encoded.slice(2)}` as Hex;
}

/** Sends one contract call as the deployer and fails unless it is mined successfully. */
export async function sendCall<
  const abi extends Abi,
  functionName extends ContractFunctionName<abi, 'nonpayable' | 'payable'>,
>(
  client: DeployerClient,
  call: {
    address: Address;
    abi: abi;
    functionName: functionName;
    args: ContractFunctionArgs<abi, 'nonpayable' | 'payable', functionName>;
    value?: bigint;
  },
): Promise<void> {
  // viem's overloads do not narrow through a generic wrapper; the call shape is checked by the signature above.
  // Simulated first, so a revert fails here with its reason rather than as a mined failure.
  const { request } = await simulateContract(client, { ...call, account: client.account } as never);
  const gas = await estimateContractGas(client, { ...call, account: client.account } as never);
  const hash = await writeContract(client, { ...(request as object), gas: (gas * 13n) / 10n } as never);
  const receipt = await waitForTransactionReceipt(client, { hash });
  if (receipt.status !== 'success')
    throw new Error(`${String(call.functionName)} on ${call.address} reverted (${hash})`);
}

/** Deploys with a plain CREATE (for contracts that must be owned by the deployer itself) and returns the address. */
export async function deployPlain(
  client: DeployerClient,
  { abi, bytecode, args }: { abi: Abi; bytecode: Hex; args: unknown[] },
): Promise<Address> {
  const hash = await deployContract(client, { abi, bytecode, args } as never);
  const receipt = await waitForTransactionReceipt(client, { hash });
  if (receipt.status !== 'success' || !receipt.contractAddress)
    throw new Error(`deployment transaction ${hash} failed`);
  return receipt.contractAddress;
}
