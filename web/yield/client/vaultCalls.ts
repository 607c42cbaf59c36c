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

export const readVault = <
  name extends ContractFunctionName<typeof VAULT_ABI, 'view'>,
  args extends ContractFunctionArgs<typeof VAULT_ABI, 'view', name>,
>(
  vault: Address,
  functionName: name,
  args: args,
) => read(VAULT_ABI, vault, functionName, args);

export const writeVault = <name extends ContractFunctionName<typeof VAULT_ABI, 'nonpayable'>>(
  vault: Address,
  functionName: name,
  args: ContractFunctionArgs<typeof VAULT_ABI, 'nonpayable', name>,
) => write(VAULT_ABI, vault, functionName, args);

export const readAsset = <
  name extends ContractFunctionName<typeof ERC20_ABI, 'view'>,
  args extends ContractFunctionArgs<typeof ERC20_ABI, 'view', name>,
>(
  asset: Address,
  functionName: name,
  args: args,
) => read(ERC20_ABI, asset, functionName, args);

export const writeAsset = <name extends ContractFunctionName<typeof ERC20_ABI, 'nonpayable'>>(
  asset: Address,
  functionName: name,
  args: ContractFunctionArgs<typeof ERC20_ABI, 'nonpayable', name>,
) => write(ERC20_ABI, asset, functionName, args);
