import { createHash, createHmac, createPrivateKey, sign as nodeSign } from 'node:crypto';
import { loadavg } from 'node:os';
import * as noble from '@noble/secp256k1';
import { type Hex, keccak256, recoverAddress, recoverMessageAddress, toHex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { LOCAL_PAYMASTER_SIGNER } from '../dev/chains/deployLocalChain';
import { fastLocalAccount, nativeSecp256k1 } from '../signer/fastAccount';
import { machineLoad } from './lib/rounds';
import { reportBenchmark } from './lib/results';

/**
 * Issue 20's signer row: signatures per second of every secp256k1 signing available to Node here, each
 * over what the paymaster signs (the EIP-191 personal-message digest of a 32-byte sponsorship hash) and
 * each answering the 65-byte `r ‖ s ‖ v` signature as hex, the form paymasterData carries:
 *
 * - viem: `privateKeyToAccount(key).signMessage({ message: { raw } })`, what signer/ used before
 *   (@noble/curves, pure JavaScript);
 * - noble v3: `@noble/secp256k1` 3.x with its precomputed base-point tables (built before timing) and
 *   node:crypto's HMAC-SHA256 for RFC 6979;
 * - node:crypto: OpenSSL ECDSA over secp256k1. It cannot sign a given digest: it always hashes its
 *   input (SHA-256 by default), so what it signs is sha256(digest), not the digest ecrecover checks,
 *   and it gives no recovery id (recovered here by trying both with libsecp256k1) and high s half the
 *   time (normalised here). Its nonces are random, not RFC 6979. Measured as what it would cost, not
 *   as a usable signer;
 * - native: libsecp256k1 through the `secp256k1` package's prebuilt binding (`secp256k1/bindings`,
 *   never its elliptic fallback);
 * - ours: signer/fastAccount.ts `fastLocalAccount(key).signMessage`, what signer/ and the sign-only
 *   baseline now use.
 *
 * Every candidate is timed over the same digests, in alternating rounds (ROUNDS × ROUND_MS each); the
 * median round counts. Before timing, each one's signatures over SAMPLES digests are checked: they
 * recover to the signer's address, and the deterministic ones are byte-for-byte viem's.
 */

const ROUNDS = 5;
const ROUND_MS = 1_000;
const SAMPLES = 64;

const privateKey = LOCAL_PAYMASTER_SIGNER.privateKey as Hex;
const signerAddress = LOCAL_PAYMASTER_SIGNER.address;
const keyBytes = Buffer.from(privateKey.slice(2), 'hex');
const PREFIX = Buffer.from('\x19Ethereum Signed Message:\n32', 'utf8');
const personalDigest = (hash: Hex): Uint8Array =>
  keccak256(Buffer.concat([PREFIX, Buffer.from(hash.slice(2), 'hex')]), 'bytes');
const toSignatureHex = (rs: Uint8Array, recovery: number): Hex =>
  `0x${Buffer.from(rs.buffer, rs.byteOffset, 64).toString('hex')}${recovery === 0 ? '1b' : '1c'}`;

type Candidate = {
  name: string;
  /** Signs the sponsorship hash the paymaster would sign; a promise where the API is async. */
  sign(hash: Hex): Hex | Promise<Hex>;
  /** Signs exactly what viem signs (RFC 6979, low s): must give viem's bytes. */
  deterministic: boolean;
  /** What the signature recovers against, when it is not the EIP-191 digest of the hash. */
  signedDigest?: (hash: Hex) => Hex;
};

function candidates(): Candidate[] {
  const viemAccount = privateKeyToAccount(privateKey);
  const native = nativeSecp256k1();
  if (!native) throw new Error('the secp256k1 native prebuild does not load on this machine');
  const ours = fastLocalAccount(privateKey);
  if (ours.backend !== 'native') throw new Error(`signer/fastAccount.ts signs with ${ours.backend}`);

  noble.hashes.hmacSha256 = (key, message) => createHmac('sha256', key).update(message).digest();
  noble.hashes.sha256 = (message) => createHash('sha256').update(message).digest();
  noble.sign(new Uint8Array(32).fill(1), keyBytes, { prehash: false }); // builds the precomputed tables

  const nodeKey = createPrivateKey({
    key: {
      kty: 'EC',
      crv: 'secp256k1',
      d: keyBytes.toString('base64url'),
      ...jwkPublicPoint(native.publicKeyCreate(keyBytes, false)),
    },
    format: 'jwk',
  });
  const publicKey = native.publicKeyCreate(keyBytes, false);
  const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
  const nodeCryptoSign = (hash: Hex): Hex => {
    const digest = personalDigest(hash);
    const signed = nodeSign('sha256', digest, { key: nodeKey, dsaEncoding: 'ieee-p1363' });
    // Low s, as Ethereum's ECDSA libraries require.
    let s = BigInt(`0x${signed.subarray(32).toString('hex')}`);
    if (s > n / 2n) s = n - s;
    const rs = Buffer.concat([signed.subarray(0, 32), Buffer.from(s.toString(16).padStart(64, '0'), 'hex')]);
    const what = createHash('sha256').update(digest).digest();
    for (const recovery of [0, 1]) {
      const recovered = native.ecdsaRecover(rs, recovery, what, false);
      if (Buffer.compare(Buffer.from(recovered), Buffer.from(publicKey)) === 0)
        return toSignatureHex(rs, recovery);
    }
    throw new Error('node:crypto signature recovers to neither parity');
  };

  return [
    {
      name: 'viem signMessage (@noble/curves; signer before)',
      sign: (hash) => viemAccount.signMessage({ message: { raw: hash } }),
      deterministic: true,
    },
    {
      name: '@noble/secp256k1 v3 (precomputed tables)',
      sign: (hash) => {
        const signature = noble.sign(personalDigest(hash), keyBytes, { prehash: false, format: 'recovered' });
        return toSignatureHex(signature.subarray(1), signature[0]!);
      },
      deterministic: true,
    },
    {
      name: 'node:crypto ECDSA + recovery (signs sha256(digest))',
      sign: nodeCryptoSign,
      deterministic: false,
      signedDigest: (hash) => toHex(createHash('sha256').update(personalDigest(hash)).digest()),
    },
    {
      name: 'native secp256k1 v5 (libsecp256k1 prebuild)',
      sign: (hash) => {
        const { signature, recid } = native.ecdsaSign(personalDigest(hash), keyBytes);
        return toSignatureHex(signature, recid);
      },
      deterministic: true,
    },
    {
      name: 'ours: signer/fastAccount.ts',
      sign: (hash) => ours.account.signMessage({ message: { raw: hash } }),
      deterministic: true,
    },
  ];
}

function jwkPublicPoint(uncompressed: Uint8Array): { x: string; y: string } {
  const point = Buffer.from(uncompressed);
  return {
    x: point.subarray(1, 33).toString('base64url'),
    y: point.subarray(33, 65).toString('base64url'),
  };
}

const hashes: Hex[] = Array.from({ length: 4096 }, (_, i) => keccak256(toHex(`sponsorship ${i}`)));

async function verify(candidate: Candidate, viemSignatures: Hex[]): Promise<void> {
  for (let i = 0; i < SAMPLES; i++) {
    const hash = hashes[i]!;
    const signature = await candidate.sign(hash);
    const recovered = candidate.signedDigest
      ? await recoverAddress({ hash: candidate.signedDigest(hash), signature })
      : await recoverMessageAddress({ message: { raw: hash }, signature });
    if (recovered !== signerAddress)
      throw new Error(`${candidate.name}: signature ${i} recovers to ${recovered}, not ${signerAddress}`);
    if (candidate.deterministic && signature !== viemSignatures[i])
      throw new Error(
        `${candidate.name}: signature ${i} differs from viem's: ${signature} vs ${viemSignatures[i]}`,
      );
  }
}

/** Signatures per second over ROUND_MS, signing one after another (one core, as the signer process does). */
async function round(candidate: Candidate): Promise<number> {
  let count = 0;
  const started = performance.now();
  let elapsed = 0;
  while (elapsed < ROUND_MS) {
    for (let i = 0; i < 64; i++) await candidate.sign(hashes[(count + i) & 4095]!);
    count += 64;
    elapsed = performance.now() - started;
  }
  return (count * 1000) / elapsed;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const atStart = machineLoad();
  const list = candidates();
  const viem = list[0]!;
  const viemSignatures = await Promise.all(hashes.slice(0, SAMPLES).map((hash) => viem.sign(hash)));
  for (const candidate of list) await verify(candidate, viemSignatures);
  // Warm-up (JIT), discarded.
  for (const candidate of list) await round(candidate);
  const perRound = new Map(list.map((candidate) => [candidate.name, [] as number[]]));
  const roundLoads: { atStart: number; atEnd: number }[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const startLoad = loadavg()[0]!;
    // Alternate the order so no candidate always runs right after another's garbage.
    const order = r % 2 === 0 ? list : [...list].reverse();
    for (const candidate of order) perRound.get(candidate.name)!.push(await round(candidate));
    roundLoads.push({ atStart: startLoad, atEnd: loadavg()[0]! });
  }
  const atEnd = machineLoad();
  const rates = Object.fromEntries(
    list.map((candidate) => [candidate.name, median(perRound.get(candidate.name)!)]),
  );
  process.stdout.write(`\n  signatures/s, median of ${ROUNDS} alternating rounds of ${ROUND_MS} ms\n`);
  for (const candidate of list)
    process.stdout.write(
      `  ${candidate.name.padEnd(54)} ${rates[candidate.name]!.toFixed(0).padStart(7)}  (rounds ${perRound
        .get(candidate.name)!
        .map((rate) => rate.toFixed(0))
        .join(', ')})\n`,
    );
  // The fastest candidate that produces a signature the paymaster contract accepts for our digest.
  const usable = list.filter((candidate) => !candidate.signedDigest && candidate.name !== list[4]!.name);
  const fastest = usable.reduce((best, candidate) =>
    rates[candidate.name]! > rates[best.name]! ? candidate : best,
  );
  const fastestAny = list
    .filter((candidate) => candidate.name !== list[4]!.name)
    .reduce((best, candidate) => (rates[candidate.name]! > rates[best.name]! ? candidate : best));
  const ours = rates[list[4]!.name]!;
  const viemRate = rates[viem.name]!;
  const fastestRate = rates[fastestAny.name]!;
  process.stdout.write(
    `  machine load average ${atStart.loadAverage1m.toFixed(2)} → ${atEnd.loadAverage1m.toFixed(2)} on ${atStart.cpus} cores\n`,
  );

  reportBenchmark('signer', {
    notes: [
      'One process, one core: each candidate signs one digest after another (synchronous APIs called directly, async ones awaited).',
      'Input: a 32-byte sponsorship hash; output: the 65-byte r‖s‖v hex of its EIP-191 digest. Every candidate recovers to the signer address; viem, noble and native are byte-for-byte equal (RFC 6979).',
      'node:crypto signs sha256(digest) (OpenSSL hashes its input; no raw-digest ECDSA), with random nonces: unusable for the paymaster; listed for its cost, and compared with as the fastest if it were fastest.',
    ],
    candidates: Object.fromEntries(
      list.map((candidate) => [
        candidate.name,
        { signaturesPerSec: rates[candidate.name], rounds: perRound.get(candidate.name) },
      ]),
    ),
    fastestCandidate: fastestAny.name,
    fastestUsableCandidate: fastest.name,
    machine: { atStart, atEnd, rounds: roundLoads },
    ratios: {
      signerVsFastestCandidate: ours / fastestRate,
      signerVsViemDefault: ours / viemRate,
    },
    goals: [
      {
        label: 'signer signatures/s vs the fastest secp256k1 signing in Node',
        now: ours / fastestRate,
        goal: { atLeast: 0.8 },
        subject: `${ours.toFixed(0)} sig/s (signer/fastAccount.ts, libsecp256k1)`,
        baseline: `${fastestRate.toFixed(0)} sig/s (${fastestAny.name})`,
      },
      {
        label: "signer signatures/s vs today's viem signer",
        now: ours / viemRate,
        goal: { atLeast: 5 },
        subject: `${ours.toFixed(0)} sig/s (signer/fastAccount.ts)`,
        baseline: `${viemRate.toFixed(0)} sig/s (viem signMessage)`,
      },
    ],
  });
}

void main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
