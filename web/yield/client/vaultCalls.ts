import {
  decodeFunctionResult,
  encodeFunctionData,
  type Abi,
  type Address,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type ContractFunctionReturnType,
  type Hex,
} from 'viem';
import { ERC20_ABI, VAULT_ABI } from './vaultAbi';
import { request, send } from './wallet';

/** Reads a view function through the wallet's eth_call, encoded and decoded by viem from the ABI. */
async function read<
  abi extends Abi,
  name extends ContractFunctionName<abi, 'view'>,
  args extends ContractFunctionArgs<abi, 'view', name>,
>(
  abi: abi,
  to: Address,
  functionName: name,
  args: args,
): Promise<ContractFunctionReturnType<abi, 'view', name, args>> {
  const data = encodeFunctionData({ abi, functionName, args } as never);
  const result = await request<Hex>('eth_call', [{ to, data }, 'latest']);
  return decodeFunctionResult({ abi, functionName, data: result } as never) as ContractFunctionReturnType<
    abi,
    'view',
    name,
    args
  >;
}

/** Sends a state-changing function from the connected account and waits for it to be mined. */
function write<abi extends Abi, name extends ContractFunctionName<abi, 'nonpayable'>>(
  abi: abi,
  to: Address,
  functionName: name,
  args: ContractFunctionArgs<abi, 'nonpayable', name>,
): Promise<void> {
  return send(to, encodeFunctionData({ abi, functionName, args } as never));
}

/** Typed reads and writes of one contract interface. */
function callsOf<abi extends Abi>(abi: abi) {
  return {
    read: <
      name extends ContractFunctionName<abi, 'view'>,
      args extends ContractFunctionArgs<abi, 'view', name>,
    >(
      to: Address,
      functionName: name,
      args: args,
    ) => read(abi, to, functionName, args),
    write: <name extends ContractFunctionName<abi, 'nonpayable'>>(
      to: Address,
      functionName: name,
      args: ContractFunctionArgs<abi, 'nonpayable', name>,
    ) => write(abi, to, functionName, args),
  };
}

/** The vault's functions (ERC-4626, ERC-7540 redeem, ERC-165). */
export const vaultCalls = callsOf(VAULT_ABI);
/** The asset's functions (ERC-20). */
export const assetCalls = callsOf(ERC20_ABI);
