import { createRequire } from 'node:module';
import type * as Secp256k1 from 'secp256k1';
import { type Hex, type SignableMessage, hashMessage } from 'viem';
import { keccak256 } from '../chain/keccak256';
import { type LocalAccount, privateKeyToAccount } from 'viem/accounts';

/**
 * The signing service's key as a viem LocalAccount whose `signMessage` and `sign` use libsecp256k1
 * (the `secp256k1` package's native prebuild, loaded directly, never its pure-JS elliptic fallback):
 * about 10× viem's default (@noble/curves) signatures per second here (bench/signer.bench.ts). Its
 * signatures are byte-for-byte viem's: RFC 6979 deterministic nonces, low s, `r ‖ s ‖ v` with v 27/28.
 * Deterministic matters: two identical requests in the same second sign the same bytes, so their
 * userOpHash is the same and the usage row's unique key keeps one of them (duplicateOperations.test.ts).
 * Where no prebuild loads, viem's own signer is used (`backend: 'viem'`), same bytes, slower.
 */

export type SigningBackend = 'native' | 'viem';

type NativeSecp256k1 = Pick<typeof Secp256k1, 'ecdsaSign' | 'ecdsaRecover' | 'publicKeyCreate'>;

let loaded: { native: NativeSecp256k1 | undefined } | undefined;

/** libsecp256k1 through the package's prebuilt binding, or undefined when it does not load here. */
export function nativeSecp256k1(): NativeSecp256k1 | undefined {
  if (!loaded) {
    try {
      // `secp256k1/bindings` is the native binding alone: `secp256k1` itself falls back to elliptic.
      loaded = { native: createRequire(__filename)('secp256k1/bindings') as NativeSecp256k1 };
    } catch {
      loaded = { native: undefined };
    }
  }
  return loaded.native;
}

const PERSONAL_PREFIX_32 = Buffer.from('\x19Ethereum Signed Message:\n32', 'utf8');

/** EIP-191 digest of a message: the common case (32 raw bytes) without viem's hex round trips. */
function personalDigest(message: SignableMessage): Uint8Array {
  if (typeof message === 'object' && message !== null) {
    const raw = typeof message.raw === 'string' ? hexBytes(message.raw) : message.raw;
    if (raw.length === 32) return keccak256(Buffer.concat([PERSONAL_PREFIX_32, raw]), 'bytes');
  }
  return hexBytes(hashMessage(message));
}

const hexBytes = (hex: Hex): Buffer => Buffer.from(hex.slice(2), 'hex');

/** Signs a 32-byte digest: 65 bytes `r ‖ s ‖ v` (v 27/28) as hex, what viem's `serializeSignature` gives. */
export function nativeDigestSigner(native: NativeSecp256k1, privateKey: Hex): (digest: Uint8Array) => Hex {
  const key = hexBytes(privateKey);
  return (digest) => {
    const { signature, recid } = native.ecdsaSign(digest, key);
    return `0x${Buffer.from(signature.buffer, signature.byteOffset, 64).toString('hex')}${recid === 0 ? '1b' : '1c'}`;
  };
}

export function fastLocalAccount(privateKey: Hex): { account: LocalAccount; backend: SigningBackend } {
  const account = privateKeyToAccount(privateKey);
  const native = nativeSecp256k1();
  if (!native) return { account, backend: 'viem' };
  const signDigest = nativeDigestSigner(native, privateKey);
  return {
    account: {
      ...account,
      sign: async ({ hash }) => signDigest(hexBytes(hash)),
      signMessage: async ({ message }) => signDigest(personalDigest(message)),
    },
    backend: 'native',
  };
}
