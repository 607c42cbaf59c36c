/**
 * The functions the site calls, on the asset (ERC-20) and on the vault (ERC-4626, ERC-7540's asynchronous
 * redeem, ERC-165): only these, so the bundle carries no more ABI than it uses. viem derives each selector
 * from its signature at build time (functionSelectors.ts) and abiCodec.ts encodes and decodes by these
 * entries; web/yield/client/vaultAbi.test.ts checks every entry against the compiled contracts.
 */

const address = (name: string) => ({ name, type: 'address' }) as const;
const uint256 = (name: string) => ({ name, type: 'uint256' }) as const;
const returnsUint256 = [uint256('')] as const;

export const ERC20_ABI = [
  {
    type: 'function',
    name: 'approve',
    stateMutability: 'nonpayable',
    inputs: [address('spender'), uint256('value')],
    outputs: [{ name: '', type: 'bool' }],
  },
  {
    type: 'function',
    name: 'allowance',
    stateMutability: 'view',
    inputs: [address('owner'), address('spender')],
    outputs: returnsUint256,
  },
  {
    type: 'function',
    name: 'balanceOf',
    stateMutability: 'view',
    inputs: [address('account')],
    outputs: returnsUint256,
  },
] as const;

export const VAULT_ABI = [
  ERC20_ABI[2],
  {
    type: 'function',
    name: 'deposit',
    stateMutability: 'nonpayable',
    inputs: [uint256('assets'), address('receiver')],
    outputs: returnsUint256,
  },
  {
    type: 'function',
    name: 'withdraw',
    stateMutability: 'nonpayable',
    inputs: [uint256('assets'), address('receiver'), address('owner')],
    outputs: returnsUint256,
  },
  {
    type: 'function',
    name: 'maxWithdraw',
    stateMutability: 'view',
    inputs: [address('owner')],
    outputs: returnsUint256,
  },
  { type: 'function', name: 'totalAssets', stateMutability: 'view', inputs: [], outputs: returnsUint256 },
  {
    type: 'function',
    name: 'supportsInterface',
    stateMutability: 'view',
    inputs: [{ name: 'interfaceId', type: 'bytes4' }],
    outputs: [{ name: '', type: 'bool' }],
  },
  {
    type: 'function',
    name: 'requestRedeem',
    stateMutability: 'nonpayable',
    inputs: [uint256('shares'), address('controller'), address('owner')],
    outputs: [uint256('requestId')],
  },
  {
    type: 'function',
    name: 'redeemRequest',
    stateMutability: 'view',
    inputs: [uint256('requestId')],
    outputs: [address('controller'), uint256('shares'), uint256('assets'), uint256('claimableAt')],
  },
  {
    type: 'function',
    name: 'openRedeemRequests',
    stateMutability: 'view',
    inputs: [address('controller')],
    outputs: [{ name: '', type: 'uint256[]' }],
  },
  {
    type: 'function',
    name: 'redeem',
    stateMutability: 'nonpayable',
    inputs: [uint256('shares'), address('receiver'), address('owner')],
    outputs: returnsUint256,
  },
  {
    type: 'function',
    name: 'maxRedeem',
    stateMutability: 'view',
    inputs: [address('owner')],
    outputs: returnsUint256,
  },
  {
    type: 'function',
    name: 'convertToAssets',
    stateMutability: 'view',
    inputs: [uint256('shares')],
    outputs: returnsUint256,
  },
  {
    type: 'function',
    name: 'convertToShares',
    stateMutability: 'view',
    inputs: [uint256('assets')],
    outputs: returnsUint256,
  },
] as const;

/** ERC-165 id of ERC-7540's asynchronous redeem interface. */
export const ERC7540_REDEEM_INTERFACE = '0x620ee8e4';
