/**
 * The customer's injected EIP-1193 wallet, and the periodic permission asked of it (issue 42): ERC-7715
 * `wallet_grantPermissions` for `erc20-token-periodic`; where the wallet does not know the method but the
 * account is a smart account (a DeleGator), the same delegation built here and signed as EIP-712 typed data.
 * Either way the result is one signed root delegation from the account to the subscription executor.
 */
import { numberToHex, toHex } from 'viem';
import {
  ROOT_AUTHORITY,
  decodePermissionContext,
  delegationTypedData,
  type Delegation,
} from '../../../chain/delegations';
import { periodTransferCaveat } from '../../../chain/periodicTransfers';
import type { SubscribeOption } from '../clientData';

export interface Eip1193Provider {
  request(args: { method: string; params?: unknown }): Promise<unknown>;
}

/** An error the customer can act on, in words. */
export class WalletRefusal extends Error {}

export function injectedWallet(): Eip1193Provider | undefined {
  return (window as unknown as { ethereum?: Eip1193Provider }).ethereum;
}

/** EIP-1193 codes of a wallet that does not implement a method. */
const UNSUPPORTED_CODES = new Set([4200, -32601]);
const USER_REJECTED = 4001;

const codeOf = (error: unknown) => (error as { code?: number } | null)?.code;

export async function connectAccount(wallet: Eip1193Provider): Promise<`0x${string}`> {
  const accounts = (await wallet.request({ method: 'eth_requestAccounts' }).catch((error: unknown) => {
    throw new WalletRefusal(
      codeOf(error) === USER_REJECTED ? 'You declined to connect the wallet.' : 'The wallet did not connect.',
    );
  })) as string[];
  if (!accounts[0]) throw new WalletRefusal('The wallet shared no account.');
  return accounts[0] as `0x${string}`;
}

export interface PeriodicGrant {
  option: SubscribeOption;
  account: `0x${string}`;
  periodSeconds: number;
  /** Unix seconds: the permission's first period begins here. */
  startTime: number;
  justification: string;
}

/** ERC-7715's answer (one permission per request): the granted permission and its context. */
interface GrantedPermission {
  context?: `0x${string}`;
}

export async function grantPeriodicPermission(
  wallet: Eip1193Provider,
  grant: PeriodicGrant,
): Promise<Delegation> {
  const { option } = grant;
  const request = {
    chainId: numberToHex(option.chainId),
    from: grant.account,
    to: option.executor,
    permission: {
      type: 'erc20-token-periodic',
      isAdjustmentAllowed: false,
      data: {
        tokenAddress: option.tokenAddress,
        periodAmount: toHex(BigInt(option.periodAmount)),
        periodDuration: grant.periodSeconds,
        startTime: grant.startTime,
        justification: grant.justification,
      },
    },
  };
  let granted: GrantedPermission[];
  try {
    granted = (await wallet.request({
      method: 'wallet_grantPermissions',
      params: [request],
    })) as GrantedPermission[];
  } catch (error) {
    if (codeOf(error) === USER_REJECTED)
      throw new WalletRefusal('You declined the permission in your wallet.');
    if (UNSUPPORTED_CODES.has(codeOf(error) ?? 0)) return signDelegationDirectly(wallet, grant);
    throw new WalletRefusal(`The wallet could not grant the permission: ${(error as Error).message}`);
  }
  const context = granted?.[0]?.context;
  if (!context) throw new WalletRefusal('The wallet answered without the permission’s context.');
  const delegations = decodePermissionContext(context);
  if (delegations.length !== 1) {
    throw new WalletRefusal(
      'The wallet granted the permission through another account; it must come from your account itself.',
    );
  }
  return delegations[0]!;
}

/**
 * A wallet without ERC-7715: a DeleGator smart account signs the delegation's EIP-712 typed data, checked
 * by the account itself (ERC-1271) when the delegation is redeemed. An account without code cannot.
 */
async function signDelegationDirectly(wallet: Eip1193Provider, grant: PeriodicGrant): Promise<Delegation> {
  const { option, account } = grant;
  const code = (await wallet
    .request({ method: 'eth_getCode', params: [account, 'latest'] })
    .catch(() => '0x')) as string;
  if (!code || code === '0x') {
    throw new WalletRefusal(
      'This wallet cannot grant periodic permissions (ERC-7715) and the account is not a smart account. Use a wallet that supports them.',
    );
  }
  await wallet
    .request({ method: 'wallet_switchEthereumChain', params: [{ chainId: numberToHex(option.chainId) }] })
    .catch(() => undefined);
  const random = crypto.getRandomValues(new Uint8Array(16));
  const unsigned = {
    delegate: option.executor,
    delegator: account,
    authority: ROOT_AUTHORITY,
    caveats: [
      periodTransferCaveat(option, {
        token: option.tokenAddress,
        periodAmount: BigInt(option.periodAmount),
        periodDuration: BigInt(grant.periodSeconds),
        startTime: BigInt(grant.startTime),
      }),
    ],
    salt: BigInt(toHex(random)),
  };
  const typedData = delegationTypedData(unsigned, {
    chainId: option.chainId,
    delegationManager: option.delegationManager,
  });
  // eth_signTypedData_v4 takes the domain's own type too (viem's wallet client adds it the same way).
  const withDomainType = {
    ...typedData,
    types: {
      EIP712Domain: [
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
        { name: 'chainId', type: 'uint256' },
        { name: 'verifyingContract', type: 'address' },
      ],
      ...typedData.types,
    },
  };
  const signature = (await wallet
    .request({
      method: 'eth_signTypedData_v4',
      params: [
        account,
        JSON.stringify(withDomainType, (_key, value: unknown) =>
          typeof value === 'bigint' ? value.toString() : value,
        ),
      ],
    })
    .catch((error: unknown) => {
      throw new WalletRefusal(
        codeOf(error) === USER_REJECTED
          ? 'You declined the permission in your wallet.'
          : 'The wallet did not sign the permission.',
      );
    })) as `0x${string}`;
  return { ...unsigned, signature };
}
