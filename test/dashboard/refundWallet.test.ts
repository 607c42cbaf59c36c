import { encodeFunctionData, erc20Abi, getAddress, hashTypedData } from 'viem';
import { forwarderRefundTypedDataJson, refundIdToBytes32 } from '../../chain/forwarderRefunds';
import { erc20TransferData, typedDataForWallet, walletErrorMessage } from '../../dashboard/src/refundWallet';

/**
 * The dashboard's refund wallet requests, against viem: the transfer's call data is exactly ERC-20
 * `transfer(to, amount)`, and the typed data handed to eth_signTypedData_v4 hashes to the forwarder's digest
 * whether or not the service's JSON carries the EIP712Domain type.
 */
describe('dashboard refund wallet requests', () => {
  it('builds ERC-20 transfer call data exactly as the ABI encodes it, for any address case and amount', () => {
    const to = '0x00000000000000000000000000000000000000aB';
    for (const amount of ['1', '10500000', (2n ** 256n - 1n).toString()]) {
      expect(erc20TransferData(to, amount)).toBe(
        encodeFunctionData({
          abi: erc20Abi,
          functionName: 'transfer',
          args: [getAddress(to.toLowerCase()), BigInt(amount)],
        }),
      );
    }
  });

  it('hands the wallet typed data whose EIP-712 hash is the forwarder refund’s, with or without EIP712Domain', () => {
    const refund = {
      chainId: 11155111,
      forwarder: getAddress('0x1111111111111111111111111111111111111111'),
      token: getAddress('0x2222222222222222222222222222222222222222'),
      to: getAddress('0x3333333333333333333333333333333333333333'),
      amount: 5_000_000n,
      refundId: refundIdToBytes32('0190a7b2-3c4d-7e5f-8a9b-0c1d2e3f4a5b'),
    };
    const served = JSON.parse(forwarderRefundTypedDataJson(refund));
    const { EIP712Domain: _domainType, ...withoutDomainType } = served.types;
    const expected = hashTypedData({ ...served, types: withoutDomainType });
    for (const typedData of [served, { ...served, types: withoutDomainType }]) {
      const forWallet = typedDataForWallet(typedData);
      expect(forWallet.types.EIP712Domain).toEqual(served.types.EIP712Domain);
      const { EIP712Domain: _walletDomainType, ...types } = forWallet.types;
      expect(hashTypedData({ ...forWallet, types } as never)).toBe(expected);
    }
  });

  it('explains the wallet’s EIP-1193 refusals and keeps the dashboard’s own messages', () => {
    expect(walletErrorMessage({ code: 4001, message: 'User rejected' })).toBe(
      'You declined the request in your wallet: nothing was sent or signed.',
    );
    expect(walletErrorMessage({ code: 4902, message: 'Unrecognized chain' }, 84532)).toBe(
      'Your wallet does not know Base Sepolia: add that network to it, then try again.',
    );
    expect(walletErrorMessage(new Error('The refund must be signed by the payout address 0xabc'))).toBe(
      'The refund must be signed by the payout address 0xabc',
    );
    expect(walletErrorMessage(Object.assign(new Error('insufficient funds'), { code: -32000 }))).toBe(
      'The wallet refused: insufficient funds',
    );
  });
});
