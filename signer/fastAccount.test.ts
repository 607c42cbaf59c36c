import { keccak256, recoverMessageAddress, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { LOCAL_PAYMASTER_SIGNER } from '../dev/chains/deployLocalChain';
import { fastLocalAccount } from './fastAccount';

describe('the signing service key (libsecp256k1)', () => {
  const key = LOCAL_PAYMASTER_SIGNER.privateKey;
  const viem = privateKeyToAccount(key);
  const fast = fastLocalAccount(key);

  it('loads the native prebuild, not a JavaScript fallback', () => {
    expect(fast.backend).toBe('native');
    expect(fast.account.address).toBe(LOCAL_PAYMASTER_SIGNER.address);
  });

  it('signs byte for byte what viem signs (RFC 6979, low s, v 27/28), and recovers to the signer', async () => {
    for (let i = 0; i < 100; i++) {
      const hash = keccak256(toHex(`sponsorship ${i}`));
      const signature = await fast.account.signMessage({ message: { raw: hash } });
      expect(signature).toBe(await viem.signMessage({ message: { raw: hash } }));
      expect(await recoverMessageAddress({ message: { raw: hash }, signature })).toBe(viem.address);
    }
    for (const message of ['hello', { raw: '0x01' as const }, { raw: new Uint8Array(32).fill(7) }]) {
      expect(await fast.account.signMessage({ message })).toBe(await viem.signMessage({ message }));
    }
    const hash = keccak256('0x1234');
    expect(await fast.account.sign!({ hash })).toBe(await viem.sign!({ hash }));
  });
});
