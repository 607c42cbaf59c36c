import type { BrowserContext } from 'playwright-core';
import { createPublicClient, createWalletClient, defineChain, getAddress, http, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';

/**
 * An EIP-1193 wallet injected into a browser context as `window.ethereum`, the way an extension injects one,
 * backed by a local viem key on the test's anvil chains: the page's requests are answered by the test process
 * (accounts, chain id and switching, sending a transaction, reading its receipt, eth_signTypedData_v4,
 * personal_sign). Refusals carry EIP-1193 codes (4902 for a chain it does not know, 4200 for a method it
 * does not support), as a real wallet's do.
 */

export interface InjectedWallet {
  /** Every method the page asked for, in order. */
  requests: string[];
  /** The chain the wallet is on now. */
  chainId(): number;
}

interface WalletAnswer {
  result?: unknown;
  error?: { code: number; message: string };
}

class WalletRefusal extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export async function injectWallet(
  context: BrowserContext,
  {
    account,
    rpcUrls,
    chainId: initialChainId,
  }: { account: PrivateKeyAccount; rpcUrls: Record<number, string>; chainId: number },
): Promise<InjectedWallet> {
  const requests: string[] = [];
  let chainId = initialChainId;
  const clientOn = (id: number) => {
    const rpcUrl = rpcUrls[id];
    if (!rpcUrl) throw new WalletRefusal(4902, `Unrecognized chain ID ${id}`);
    const chain = defineChain({
      id,
      name: `chain ${id}`,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } },
    });
    return {
      wallet: createWalletClient({ account, chain, transport: http(rpcUrl) }),
      reader: createPublicClient({ chain, transport: http(rpcUrl) }),
    };
  };
  const ownAccount = (address: unknown) => {
    if (getAddress(String(address)) !== account.address)
      throw new WalletRefusal(4100, `The wallet holds no key for ${String(address)}`);
  };
  const answer = async (method: string, params: unknown[]): Promise<unknown> => {
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [account.address];
      case 'eth_chainId':
        return `0x${chainId.toString(16)}`;
      case 'wallet_switchEthereumChain': {
        const wanted = Number.parseInt((params[0] as { chainId: string }).chainId, 16);
        clientOn(wanted);
        chainId = wanted;
        return null;
      }
      case 'eth_sendTransaction': {
        const request = params[0] as { from: string; to: Hex; data?: Hex; value?: Hex };
        ownAccount(request.from);
        return clientOn(chainId).wallet.sendTransaction({
          to: request.to,
          data: request.data,
          value: request.value === undefined ? undefined : BigInt(request.value),
        });
      }
      case 'eth_getTransactionReceipt':
        return clientOn(chainId).reader.request({
          method: 'eth_getTransactionReceipt',
          params: [params[0] as Hex],
        });
      case 'eth_signTypedData_v4': {
        ownAccount(params[0]);
        const typedData = JSON.parse(String(params[1]));
        // viem derives the domain's type from the domain itself; the wallet request carries it explicitly.
        const { EIP712Domain: _domainType, ...types } = typedData.types;
        return account.signTypedData({
          domain: typedData.domain,
          types,
          primaryType: typedData.primaryType,
          message: typedData.message,
        });
      }
      case 'personal_sign':
        ownAccount(params[1]);
        return account.signMessage({ message: { raw: params[0] as Hex } });
      default:
        throw new WalletRefusal(4200, `Unsupported method ${method}`);
    }
  };
  await context.exposeFunction(
    '__injectedWallet',
    async (method: string, params: unknown[]): Promise<WalletAnswer> => {
      requests.push(method);
      try {
        return { result: await answer(method, params) };
      } catch (caught) {
        const code = caught instanceof WalletRefusal ? caught.code : -32603;
        return { error: { code, message: (caught as Error).message } };
      }
    },
  );
  await context.addInitScript(() => {
    const call = (
      window as unknown as { __injectedWallet: (m: string, p: unknown[]) => Promise<WalletAnswer> }
    ).__injectedWallet;
    (window as unknown as { ethereum: unknown }).ethereum = {
      async request({ method, params }: { method: string; params?: unknown[] }) {
        const { result, error } = await call(method, params ?? []);
        if (error) throw Object.assign(new Error(error.message), { code: error.code });
        return result;
      },
    };
  });
  return { requests, chainId: () => chainId };
}
