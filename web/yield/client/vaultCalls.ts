import type {
  Abi,
  AbiFunction,
  Address,
  ContractFunctionArgs,
  ContractFunctionName,
  ContractFunctionReturnType,
  Hex,
} from 'viem';
import { decodeResult, encodeCall } from './abiCodec';
import { FUNCTION_SELECTORS, type SiteFunctionName } from './functionSelectors';
import { ERC20_ABI, VAULT_ABI } from './vaultAbi';
import { request, send } from './wallet';

/**
 * The ABI entry of `functionName` and its call data (the selector from the build, the arguments by the
 * entry's inputs); `args` is typed by read's and write's signatures, from the same entry.
 */
function call(abi: Abi, functionName: string, args: unknown) {
  const entry = abi.find(
    (item): item is AbiFunction => item.type === 'function' && item.name === functionName,
  )!;
  const selector = FUNCTION_SELECTORS[functionName as SiteFunctionName];
  return { entry, data: encodeCall(selector, entry.inputs, args as readonly unknown[]) };
}

/** Reads a view function through the wallet's eth_call, encoded and decoded by the ABI's entry. */
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
  const { entry, data } = call(abi, functionName, args);
  const result = await request<Hex>('eth_call', [{ to, data }, 'latest']);
  return decodeResult(entry.outputs, result) as ContractFunctionReturnType<abi, 'view', name, args>;
}

/** Sends a state-changing function from the connected account and waits for it to be mined. */
function write<abi extends Abi, name extends ContractFunctionName<abi, 'nonpayable'>>(
  abi: abi,
  to: Address,
  functionName: name,
  args: ContractFunctionArgs<abi, 'nonpayable', name>,
): Promise<void> {
  return send(to, call(abi, functionName, args).data);
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
