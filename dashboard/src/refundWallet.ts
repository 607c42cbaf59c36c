import { chainName } from './format';
import type { PreparedTransfer, RefundAuthorization } from './types';

/**
 * The merchant's browser wallet (EIP-1193) paying a refund: sending a merchant-paid refund's prepared ERC-20
 * transfer, and signing a forwarder refund's EIP-712 authorization as the payout address. The wallet does the
 * signing; the dashboard only builds the requests and explains the wallet's refusals.
 */

interface Eip1193Error {
  code?: number;
  message?: string;
}

/** How long to wait between asking the wallet for a sent transaction's receipt. */
const RECEIPT_POLL_MS = 1500;

function walletProvider() {
  const provider = window.ethereum;
  if (!provider) throw new Error('No browser wallet found: install one, or send the transfer another way');
  return provider;
}

/**
 * A wallet's refusal in words a merchant can act on (EIP-1193 codes 4001, 4100, 4902); a failure of the
 * dashboard's own (no wallet, the wrong account) keeps its message.
 */
export function walletErrorMessage(caught: unknown, chainId?: number): string {
  const error = caught as Eip1193Error;
  if (caught instanceof Error && typeof error.code !== 'number') return caught.message;
  if (error?.code === 4001) return 'You declined the request in your wallet: nothing was sent or signed.';
  if (error?.code === 4100)
    return 'The wallet did not allow this site to use that account: unlock or connect it.';
  if (error?.code === 4902 && chainId !== undefined)
    return `Your wallet does not know ${chainName(chainId)}: add that network to it, then try again.`;
  return error?.message ? `The wallet refused: ${error.message}` : 'The wallet refused the request.';
}

const hexOf = (value: bigint | number) => `0x${value.toString(16)}`;

/** `transfer(to, amount)` of ERC-20 as call data: its selector and the two 32-byte words. */
export function erc20TransferData(to: string, amount: string): string {
  const word = (hex: string) => hex.toLowerCase().replace(/^0x/, '').padStart(64, '0');
  return `0xa9059cbb${word(to)}${word(BigInt(amount).toString(16))}`;
}

async function firstAccount(): Promise<string> {
  const accounts = (await walletProvider().request({ method: 'eth_requestAccounts' })) as string[];
  const account = accounts[0];
  if (!account) throw new Error('The wallet shared no account');
  return account;
}

/** Puts the wallet on `chainId` when it is on another chain (wallet_switchEthereumChain, EIP-3326). */
async function switchChain(chainId: number): Promise<void> {
  const provider = walletProvider();
  const current = Number.parseInt((await provider.request({ method: 'eth_chainId' })) as string, 16);
  if (current === chainId) return;
  await provider.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: hexOf(chainId) }] });
}

/**
 * Sends exactly the prepared transfer from the wallet's account, on its chain, and answers its hash once the
 * wallet reports it mined: the service verifies a mined transaction only.
 */
export async function sendPreparedTransfer(
  transfer: PreparedTransfer,
  onSent: (txHash: string) => void,
): Promise<{ txHash: string; reverted: boolean }> {
  const provider = walletProvider();
  const from = await firstAccount();
  await switchChain(transfer.chainId);
  const txHash = (await provider.request({
    method: 'eth_sendTransaction',
    params: [{ from, to: transfer.tokenAddress, data: erc20TransferData(transfer.to, transfer.amount) }],
  })) as string;
  onSent(txHash);
  for (;;) {
    const receipt = (await provider.request({ method: 'eth_getTransactionReceipt', params: [txHash] })) as {
      status?: string;
    } | null;
    if (receipt) return { txHash, reverted: receipt.status === '0x0' };
    await new Promise((resolve) => setTimeout(resolve, RECEIPT_POLL_MS));
  }
}

/** EIP-712's domain fields, in the order the standard lists them, with their types. */
const DOMAIN_FIELDS = [
  ['name', 'string'],
  ['version', 'string'],
  ['chainId', 'uint256'],
  ['verifyingContract', 'address'],
  ['salt', 'bytes32'],
] as const;

/**
 * The typed data as eth_signTypedData_v4 takes it: with its `EIP712Domain` type, built from the domain's
 * fields when the service left it out (wallets hash the domain by that type).
 */
export function typedDataForWallet(typedData: RefundAuthorization['typedData']) {
  if ('EIP712Domain' in typedData.types) return typedData;
  const domain = typedData.domain as Record<string, unknown>;
  const EIP712Domain = DOMAIN_FIELDS.filter(([name]) => domain[name] !== undefined).map(([name, type]) => ({
    name,
    type,
  }));
  return { ...typedData, types: { EIP712Domain, ...typedData.types } };
}

/**
 * Has the wallet sign the refund's authorization as the payout address (eth_signTypedData_v4). A wallet on
 * another account is told which one signs: only the payout address's signature moves the forwarder's funds.
 */
export async function signRefundAuthorization(authorization: RefundAuthorization): Promise<string> {
  const provider = walletProvider();
  const accounts = (await provider.request({ method: 'eth_requestAccounts' })) as string[];
  const signer = authorization.signer;
  if (!accounts.some((account) => account.toLowerCase() === signer.toLowerCase()))
    throw new Error(
      `The refund must be signed by the payout address ${signer}; the wallet offers ${accounts.join(', ') || 'no account'}: switch to the payout address’s account`,
    );
  return (await provider.request({
    method: 'eth_signTypedData_v4',
    params: [signer, JSON.stringify(typedDataForWallet(authorization.typedData))],
  })) as string;
}
