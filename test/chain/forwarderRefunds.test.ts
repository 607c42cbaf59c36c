import { randomUUID } from 'node:crypto';
import {
  type Address,
  type Hex,
  BaseError,
  ContractFunctionRevertedError,
  concat,
  createWalletClient,
  getAddress,
  hexToBigInt,
  http,
  keccak256,
  numberToHex,
  parseEventLogs,
  publicActions,
  serializeErc6492Signature,
  size,
  slice,
  toHex,
} from 'viem';
import { type PrivateKeyAccount, generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { Forwarder, OwnedContractWallet } from '../../contracts/artifacts';
import type { OperatorClient } from '../../chain/operatorChains';
import {
  type ForwarderRefund,
  type SignedForwarderRefund,
  ForwarderNotDeployedError,
  ForwarderRefundChainMismatchError,
  ForwarderRefundFailedError,
  ForwarderRefundRefusedError,
  awaitForwarderRefund,
  encodeForwarderRefundCall,
  forwarderRefundDigest,
  forwarderRefundTypedData,
  forwarderRefundTypedDataJson,
  isForwarderRefundIdUsed,
  refundIdToBytes32,
  relayForwarderRefund,
  verifyForwarderRefundSignature,
} from '../../chain/forwarderRefunds';
import { signCallWithNonce } from '../../activities/lockedSends';
import { ANVIL_DEV_ACCOUNTS } from '../../dev/services/anvil';
import {
  ACCOUNTS,
  type Actor,
  LAYER2_CHAIN,
  SETTLEMENT_CHAIN,
  type SettlementChain,
  type SettlementChains,
  balanceOf,
  deployForwarder,
  expectRevert,
  flush,
  freshAddress,
  newSession,
  pay,
  previewDeposit,
  send,
  startSettlementChains,
} from './settlementFixture';

/**
 * Refunds from a forwarder (issue 41): funds leave a deposit address for anywhere but the merchant only
 * where the merchant payout address signed, once per refund id. Each refused attempt is proved by
 * simulation and by a mined, reverted transaction, and by the balances staying put.
 */

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

let chains: SettlementChains;
let l1: SettlementChain;
let operator: OperatorClient;

beforeAll(async () => {
  chains = await startSettlementChains([SETTLEMENT_CHAIN]);
  l1 = chains.chain(SETTLEMENT_CHAIN);
  operator = createWalletClient({
    account: privateKeyToAccount(ACCOUNTS.operator.privateKey),
    chain: l1.wallet('operator').chain,
    transport: http(l1.rpcUrl),
    pollingInterval: 50,
  }).extend(publicActions) as OperatorClient;
}, 240_000);

/**
 * The operator's sender as the worker has it: the next pending nonce, signed by activities/lockedSends.ts
 * (the worker also holds the key's lock in Postgres; these tests send one transaction at a time).
 */
async function sendFromOperator(call: { to: Address; data: Hex }): Promise<Hex> {
  const nonce = await operator.getTransactionCount({
    address: operator.account.address,
    blockTag: 'pending',
  });
  return operator.sendRawTransaction({
    serializedTransaction: await signCallWithNonce(operator, call, nonce),
  });
}

function relay(signed: SignedForwarderRefund): Promise<Hex> {
  return relayForwarderRefund(operator, signed, { send: sendFromOperator });
}

afterAll(async () => {
  await chains?.stop();
});

interface FundedForwarder {
  forwarder: Address;
  merchant: Address;
  token: Address;
  balance: bigint;
}

/** A deployed forwarder holding `balance` USDC, bound to the payout address `merchant`. */
async function fundedForwarder(merchant: Address, balance = 10_000_000n): Promise<FundedForwarder> {
  const session = await newSession(l1, { merchant });
  await pay(l1, l1.contracts.usdc, session.forwarder, balance);
  await deployForwarder(l1, session);
  return { forwarder: session.forwarder, merchant, token: l1.contracts.usdc, balance };
}

function refundOf(funded: FundedForwarder, overrides: Partial<ForwarderRefund> = {}): ForwarderRefund {
  return {
    chainId: l1.chainId,
    forwarder: funded.forwarder,
    token: funded.token,
    to: freshAddress(),
    amount: 2_500_000n,
    refundId: refundIdToBytes32(randomUUID()),
    ...overrides,
  };
}

function sign(signer: PrivateKeyAccount, refund: ForwarderRefund): Promise<Hex> {
  return signer.signTypedData(forwarderRefundTypedData(refund));
}

function refundCall(refund: ForwarderRefund, signature: Hex) {
  return {
    address: refund.forwarder,
    abi: Forwarder.abi,
    functionName: 'refund',
    args: [refund.token, refund.to, refund.amount, refund.refundId, signature],
  } as const;
}

/** The forwarder's custom error for this call (by simulation), or undefined when it would succeed. */
async function refusal(refund: ForwarderRefund, signature: Hex, actor: Actor = 'operator') {
  const error = await l1.publicClient
    .simulateContract({ ...refundCall(refund, signature), account: l1.wallet(actor).account })
    .then(
      () => undefined,
      (caught: unknown) => caught,
    );
  if (error === undefined) return undefined;
  const reverted =
    error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : null;
  if (!(reverted instanceof ContractFunctionRevertedError)) throw error;
  return reverted.data?.errorName ?? 'unknown';
}

async function balances(funded: FundedForwarder, to: Address) {
  const { token } = funded;
  return {
    forwarder: await balanceOf(l1, token, funded.forwarder),
    to: await balanceOf(l1, token, to),
    merchant: await balanceOf(l1, token, funded.merchant),
  };
}

async function deployContractWallet(owner: Address): Promise<Address> {
  const wallet = l1.wallet('owner');
  const hash = await wallet.deployContract({
    abi: OwnedContractWallet.abi,
    bytecode: OwnedContractWallet.bytecode,
    args: [owner],
    account: wallet.account,
    chain: wallet.chain,
  });
  const receipt = await l1.publicClient.waitForTransactionReceipt({ hash });
  if (!receipt.contractAddress) throw new Error('OwnedContractWallet deployment failed');
  return getAddress(receipt.contractAddress);
}

describe('a refund the payout address signed', () => {
  it('a refund signed by the payout EOA moves exactly the amount to `to`, relayed by the operator', async () => {
    const payout = privateKeyToAccount(generatePrivateKey());
    const funded = await fundedForwarder(payout.address);
    const refund = refundOf(funded);
    const signature = await sign(payout, refund);
    expect(
      await verifyForwarderRefundSignature(l1.publicClient, { refund, merchant: payout.address, signature }),
    ).toEqual({
      valid: true,
    });
    const operatorTokensBefore = await balanceOf(l1, funded.token, ACCOUNTS.operator.address);

    const txHash = await relay({ refund, signature });
    const paid = await awaitForwarderRefund(l1.publicClient, { refund, txHash });

    expect(paid.txHash).toBe(txHash);
    expect(paid.gasUsed).toBeGreaterThan(0n);
    expect(paid.gasUsed).toBeLessThan(120_000n); // about 94k: docs/decisions.md "Refunds from the forwarder"
    const receipt = await l1.publicClient.getTransactionReceipt({ hash: txHash });
    expect(receipt.from).toBe(ACCOUNTS.operator.address.toLowerCase());
    const events = parseEventLogs({ abi: Forwarder.abi, eventName: 'Refunded', logs: receipt.logs });
    expect(events.map(({ address, args }) => ({ address: getAddress(address), args }))).toEqual([
      {
        address: funded.forwarder,
        args: { refundId: refund.refundId, token: funded.token, to: refund.to, amount: 2_500_000n },
      },
    ]);
    expect(await balances(funded, refund.to)).toEqual({
      forwarder: 7_500_000n,
      to: 2_500_000n,
      merchant: 0n,
    });
    expect(await balanceOf(l1, funded.token, ACCOUNTS.operator.address)).toBe(operatorTokensBefore);
    expect(await isForwarderRefundIdUsed(l1.publicClient, refund)).toBe(true);
  });

  it('a wallet signing forwarderRefundTypedDataJson (eth_signTypedData_v4) authorizes the refund', async () => {
    // Anvil's unlocked dev accounts sign through the node, as a browser wallet signs through EIP-1193.
    const payout = ANVIL_DEV_ACCOUNTS[6]!.address;
    const funded = await fundedForwarder(payout);
    const refund = refundOf(funded);
    const signature = await l1.publicClient.request({
      method: 'eth_signTypedData_v4' as never,
      params: [payout, forwarderRefundTypedDataJson(refund)] as never,
    });
    expect(
      await verifyForwarderRefundSignature(l1.publicClient, { refund, merchant: payout, signature }),
    ).toEqual({
      valid: true,
    });
    const txHash = await relay({ refund, signature });
    await awaitForwarderRefund(l1.publicClient, { refund, txHash });
    expect(await balanceOf(l1, funded.token, refund.to)).toBe(refund.amount);
  });

  it('anyone may relay a signed refund, and the funds still go only where the merchant signed', async () => {
    const payout = privateKeyToAccount(generatePrivateKey());
    const funded = await fundedForwarder(payout.address);
    const refund = refundOf(funded, { amount: funded.balance });
    const signature = await sign(payout, refund);

    await send(l1, 'attacker', refundCall(refund, signature));

    expect(await balances(funded, refund.to)).toEqual({ forwarder: 0n, to: funded.balance, merchant: 0n });
    expect(await balanceOf(l1, funded.token, ACCOUNTS.attacker.address)).toBe(0n);
  });

  it('a flush still pays the merchant what a partial refund left', async () => {
    const payout = privateKeyToAccount(generatePrivateKey());
    const funded = await fundedForwarder(payout.address, 10_000_000n);
    const refund = refundOf(funded, { amount: 3_000_000n });
    await relay({ refund, signature: await sign(payout, refund) }).then((txHash) =>
      awaitForwarderRefund(l1.publicClient, { refund, txHash }),
    );

    const shares = await previewDeposit(l1, 7n * 10n ** 18n);
    await flush(l1, funded.forwarder, funded.token, 0n);
    expect(await balanceOf(l1, l1.contracts.susde, payout.address)).toBe(shares);
    expect(await balances(funded, refund.to)).toEqual({ forwarder: 0n, to: 3_000_000n, merchant: 0n });
  });

  it('the domain is the clone’s: eip712Domain and refundDigest name the clone and the chain, and equal the off-chain typed data', async () => {
    const funded = await fundedForwarder(freshAddress());
    const refund = refundOf(funded);
    const [, name, version, chainId, verifyingContract] = await l1.publicClient.readContract({
      address: funded.forwarder,
      abi: Forwarder.abi,
      functionName: 'eip712Domain',
    });
    expect({ name, version, chainId, verifyingContract }).toEqual({
      name: 'StablePay Forwarder',
      version: '1',
      chainId: BigInt(l1.chainId),
      verifyingContract: funded.forwarder,
    });
    const onChain = await l1.publicClient.readContract({
      address: funded.forwarder,
      abi: Forwarder.abi,
      functionName: 'refundDigest',
      args: [refund.token, refund.to, refund.amount, refund.refundId],
    });
    expect(onChain).toBe(forwarderRefundDigest(refund));
  });
});

describe('who may authorize a refund', () => {
  it('a refund signed by anyone but the payout address is refused and moves nothing', async () => {
    const payout = privateKeyToAccount(generatePrivateKey());
    const funded = await fundedForwarder(payout.address);
    const refund = refundOf(funded);
    const impostors = [
      privateKeyToAccount(ACCOUNTS.operator.privateKey),
      privateKeyToAccount(ACCOUNTS.owner.privateKey),
      privateKeyToAccount(ACCOUNTS.attacker.privateKey),
      privateKeyToAccount(generatePrivateKey()),
    ];
    for (const impostor of impostors) {
      const signature = await sign(impostor, refund);
      await expectRevert(l1, 'operator', refundCall(refund, signature), 'InvalidRefundSignature');
      const check = await verifyForwarderRefundSignature(l1.publicClient, {
        refund,
        merchant: payout.address,
        signature,
      });
      expect(check).toEqual({
        valid: false,
        reason: `signed by ${impostor.address}, not by the payout address ${payout.address}`,
      });
    }
    await expectRevert(l1, 'operator', refundCall(refund, '0x'), 'InvalidRefundSignature');
    await expect(relay({ refund, signature: await sign(impostors[0]!, refund) })).rejects.toThrow(
      `Forwarder ${funded.forwarder} refuses the refund: the signature is not the payout address’s over this refund (InvalidRefundSignature).`,
    );
    expect(await balances(funded, refund.to)).toEqual({ forwarder: funded.balance, to: 0n, merchant: 0n });
    expect(await isForwarderRefundIdUsed(l1.publicClient, refund)).toBe(false);
  });

  it('a replayed signature moves nothing', async () => {
    const payout = privateKeyToAccount(generatePrivateKey());
    const funded = await fundedForwarder(payout.address);
    const refund = refundOf(funded, { amount: 1_000_000n });
    const signature = await sign(payout, refund);
    await send(l1, 'operator', refundCall(refund, signature));
    expect(await balances(funded, refund.to)).toEqual({
      forwarder: 9_000_000n,
      to: 1_000_000n,
      merchant: 0n,
    });

    for (const relayer of ['operator', 'attacker'] as const) {
      await expectRevert(l1, relayer, refundCall(refund, signature), 'RefundIdUsed', [refund.refundId]);
    }
    const relayed = relay({ refund, signature });
    await expect(relayed).rejects.toBeInstanceOf(ForwarderRefundRefusedError);
    await expect(relayed).rejects.toMatchObject({ errorName: 'RefundIdUsed', errorArgs: [refund.refundId] });
    // The same id under a fresh signature of other terms pays nothing either.
    const other = { ...refund, to: freshAddress(), amount: 2_000_000n };
    await expectRevert(l1, 'operator', refundCall(other, await sign(payout, other)), 'RefundIdUsed');
    expect(await balances(funded, refund.to)).toEqual({
      forwarder: 9_000_000n,
      to: 1_000_000n,
      merchant: 0n,
    });
    expect(await balanceOf(l1, funded.token, other.to)).toBe(0n);
  });

  it('a signature for another forwarder, token, recipient, amount, refund id or chain is refused', async () => {
    const payout = privateKeyToAccount(generatePrivateKey());
    const funded = await fundedForwarder(payout.address);
    // A second deposit address of the same merchant, holding USDT too.
    const sibling = await fundedForwarder(payout.address);
    await pay(l1, l1.contracts.usdt, funded.forwarder, 5_000_000n);
    const refund = refundOf(funded);

    const signedElsewhere: [string, ForwarderRefund][] = [
      ['another forwarder of the same merchant', { ...refund, forwarder: sibling.forwarder }],
      ['another token', { ...refund, token: l1.contracts.usdt }],
      ['another recipient', { ...refund, to: freshAddress() }],
      ['another amount', { ...refund, amount: refund.amount - 1n }],
      ['another refund id', { ...refund, refundId: refundIdToBytes32(randomUUID()) }],
      ['another chain', { ...refund, chainId: LAYER2_CHAIN }],
    ];
    for (const [what, signedFor] of signedElsewhere) {
      const signature = await sign(payout, signedFor);
      expect([what, await refusal(refund, signature)]).toEqual([what, 'InvalidRefundSignature']);
      expect([
        what,
        await verifyForwarderRefundSignature(l1.publicClient, {
          refund,
          merchant: payout.address,
          signature,
        }),
      ]).toEqual([
        what,
        {
          valid: false,
          reason: expect.stringMatching(/^signed by 0x[0-9a-fA-F]{40}, not by the payout address/),
        },
      ]);
    }
    // The sibling's own signature, sent to the sibling's address but naming the first forwarder, is refused there too.
    const forSibling = await sign(payout, { ...refund, forwarder: sibling.forwarder });
    await expectRevert(
      l1,
      'operator',
      refundCall({ ...refund, forwarder: sibling.forwarder }, await sign(payout, refund)),
      'InvalidRefundSignature',
    );
    await expectRevert(l1, 'operator', refundCall(refund, forSibling), 'InvalidRefundSignature');

    expect(await balances(funded, refund.to)).toEqual({ forwarder: funded.balance, to: 0n, merchant: 0n });
    expect(await balanceOf(l1, l1.contracts.usdt, funded.forwarder)).toBe(5_000_000n);
    expect(await balanceOf(l1, funded.token, sibling.forwarder)).toBe(sibling.balance);
  });

  it('a smart-account payout address (ERC-1271) authorizes through its owner; a wrong owner is refused', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const stranger = privateKeyToAccount(generatePrivateKey());
    const payoutContract = await deployContractWallet(owner.address);
    const funded = await fundedForwarder(payoutContract);
    const refund = refundOf(funded, { amount: 4_000_000n });

    const wrong = await sign(stranger, refund);
    expect(
      await verifyForwarderRefundSignature(l1.publicClient, {
        refund,
        merchant: payoutContract,
        signature: wrong,
      }),
    ).toEqual({
      valid: false,
      reason: `the payout contract ${payoutContract} does not accept the signature (ERC-1271 answered 0xffffffff${'0'.repeat(56)})`,
    });
    await expectRevert(l1, 'operator', refundCall(refund, wrong), 'InvalidRefundSignature');
    expect(await balances(funded, refund.to)).toEqual({ forwarder: funded.balance, to: 0n, merchant: 0n });

    const signature = await sign(owner, refund);
    expect(
      await verifyForwarderRefundSignature(l1.publicClient, { refund, merchant: payoutContract, signature }),
    ).toEqual({
      valid: true,
    });
    const txHash = await relay({ refund, signature });
    await awaitForwarderRefund(l1.publicClient, { refund, txHash });
    expect(await balances(funded, refund.to)).toEqual({
      forwarder: 6_000_000n,
      to: 4_000_000n,
      merchant: 0n,
    });
  });

  it('a payout contract without ERC-1271 cannot authorize: refused off-chain and on-chain', async () => {
    // Any contract without isValidSignature will do: here the stablecoin itself is the payout address.
    const payoutContract = l1.contracts.usdt;
    const funded = await fundedForwarder(payoutContract);
    const refund = refundOf(funded);
    const signature = await sign(privateKeyToAccount(generatePrivateKey()), refund);
    expect(
      await verifyForwarderRefundSignature(l1.publicClient, { refund, merchant: payoutContract, signature }),
    ).toEqual({
      valid: false,
      reason: `the payout contract ${payoutContract} does not accept the signature (reverted or gave no ERC-1271 answer)`,
    });
    await expectRevert(l1, 'operator', refundCall(refund, signature), 'InvalidRefundSignature');
    expect(await balanceOf(l1, funded.token, funded.forwarder)).toBe(funded.balance);
  });

  it('the payout key’s own signature in a malleable form (high s, v of 0 or 1) is refused off-chain and on-chain', async () => {
    const payout = privateKeyToAccount(generatePrivateKey());
    const funded = await fundedForwarder(payout.address);
    const refund = refundOf(funded);
    const signature = await sign(payout, refund);
    const v = Number(hexToBigInt(slice(signature, 64, 65)));
    const highS = concat([
      slice(signature, 0, 32),
      numberToHex(SECP256K1_N - hexToBigInt(slice(signature, 32, 64)), { size: 32 }),
      numberToHex(v === 27 ? 28 : 27, { size: 1 }),
    ]);
    const vZeroOne = concat([slice(signature, 0, 64), numberToHex(v - 27, { size: 1 })]);
    const check = (malleable: Hex) =>
      verifyForwarderRefundSignature(l1.publicClient, {
        refund,
        merchant: payout.address,
        signature: malleable,
      });

    expect(await check(highS)).toEqual({
      valid: false,
      reason: 'ECDSA s is in the upper half of the curve order (a malleable signature)',
    });
    expect(await check(vZeroOne)).toEqual({
      valid: false,
      reason: `ECDSA v must be 27 or 28 (got ${v - 27})`,
    });
    expect(await refusal(refund, highS)).toBe('InvalidRefundSignature');
    expect(await refusal(refund, vZeroOne)).toBe('InvalidRefundSignature');
    expect(await check(signature)).toEqual({ valid: true });
    expect(await refusal(refund, signature)).toBeUndefined();
  });

  it('an ERC-6492 signature of an undeployed account is refused off-chain and on-chain', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const funded = await fundedForwarder(freshAddress());
    const refund = refundOf(funded);
    const signature = serializeErc6492Signature({
      address: freshAddress(),
      data: '0xdeadbeef',
      signature: await sign(owner, refund),
    });
    const check = await verifyForwarderRefundSignature(l1.publicClient, {
      refund,
      merchant: funded.merchant,
      signature,
    });
    expect(check).toEqual({
      valid: false,
      reason: expect.stringMatching(/^an ERC-6492 signature of an undeployed account/),
    });
    expect(await refusal(refund, signature)).toBe('InvalidRefundSignature');
  });
});

describe('what a refund may move', () => {
  it('a refund above the forwarder’s balance is refused with RefundExceedsBalance, and nothing moves', async () => {
    const payout = privateKeyToAccount(generatePrivateKey());
    const funded = await fundedForwarder(payout.address, 5_000_000n);
    const refund = refundOf(funded, { amount: 5_000_001n });
    const signature = await sign(payout, refund);
    await expectRevert(l1, 'operator', refundCall(refund, signature), 'RefundExceedsBalance', [
      5_000_001n,
      5_000_000n,
    ]);
    await expect(relay({ refund, signature })).rejects.toThrow(
      `Forwarder ${funded.forwarder} refuses the refund: the amount 5000001 is above the forwarder's balance 5000000 (RefundExceedsBalance).`,
    );
    expect(await balances(funded, refund.to)).toEqual({ forwarder: 5_000_000n, to: 0n, merchant: 0n });
    // A refused refund does not use up its id: once the funds are there, the same signature pays.
    await pay(l1, funded.token, funded.forwarder, 1n);
    await send(l1, 'operator', refundCall(refund, signature));
    expect(await balances(funded, refund.to)).toEqual({ forwarder: 0n, to: 5_000_001n, merchant: 0n });
  });

  it('a refund to the zero address or of nothing is refused, signed or not', async () => {
    const payout = privateKeyToAccount(generatePrivateKey());
    const funded = await fundedForwarder(payout.address);
    const toZero = refundOf(funded, { to: '0x0000000000000000000000000000000000000000' });
    const ofNothing = refundOf(funded, { amount: 0n });
    // The typed-data builder refuses both, so these are signed over hand-built digests of the same struct.
    const signDigest = async (refund: ForwarderRefund) =>
      payout.sign({
        hash: await l1.publicClient.readContract({
          address: funded.forwarder,
          abi: Forwarder.abi,
          functionName: 'refundDigest',
          args: [refund.token, refund.to, refund.amount, refund.refundId],
        }),
      });
    await expectRevert(l1, 'operator', refundCall(toZero, await signDigest(toZero)), 'RefundToZeroAddress');
    await expectRevert(l1, 'operator', refundCall(ofNothing, await signDigest(ofNothing)), 'ZeroRefund');
    expect(await balanceOf(l1, funded.token, funded.forwarder)).toBe(funded.balance);
  });

  it('the implementation refuses refunds and digests (NotAClone)', async () => {
    const implementation = l1.contracts.forwarderImplementation;
    const refund = refundOf({
      forwarder: implementation,
      merchant: freshAddress(),
      token: l1.contracts.usdc,
      balance: 0n,
    });
    await expectRevert(l1, 'operator', refundCall(refund, '0x'), 'NotAClone');
    await expect(
      l1.publicClient.readContract({
        address: implementation,
        abi: Forwarder.abi,
        functionName: 'refundDigest',
        args: [refund.token, refund.to, refund.amount, refund.refundId],
      }),
    ).rejects.toThrow(/NotAClone/);
  });
});

describe('relaying from the operator account', () => {
  it('relayForwarderRefund sends nothing when the forwarder refuses, is not deployed yet, or is on another chain', async () => {
    const payout = privateKeyToAccount(generatePrivateKey());
    const funded = await fundedForwarder(payout.address);
    const nonceBefore = await l1.publicClient.getTransactionCount({ address: ACCOUNTS.operator.address });

    const tooMuch = refundOf(funded, { amount: funded.balance + 1n });
    await expect(relay({ refund: tooMuch, signature: await sign(payout, tooMuch) })).rejects.toMatchObject({
      name: 'ForwarderRefundRefusedError',
      errorName: 'RefundExceedsBalance',
    });

    const undeployed = await newSession(l1, { merchant: payout.address });
    await pay(l1, funded.token, undeployed.forwarder, 1_000_000n);
    const early = refundOf(funded, { forwarder: undeployed.forwarder, amount: 1_000_000n });
    const earlySignature = await sign(payout, early);
    // The forwarder need not exist for the payout address to sign, or for the signature to be checked ...
    expect(
      await verifyForwarderRefundSignature(l1.publicClient, {
        refund: early,
        merchant: payout.address,
        signature: earlySignature,
      }),
    ).toEqual({
      valid: true,
    });
    // ... but it must exist to pay.
    await expect(relay({ refund: early, signature: earlySignature })).rejects.toThrow(
      ForwarderNotDeployedError,
    );

    const elsewhere = refundOf(funded, { chainId: LAYER2_CHAIN });
    await expect(relay({ refund: elsewhere, signature: await sign(payout, elsewhere) })).rejects.toThrow(
      new ForwarderRefundChainMismatchError(LAYER2_CHAIN, SETTLEMENT_CHAIN),
    );
    expect(await l1.publicClient.getTransactionCount({ address: ACCOUNTS.operator.address })).toBe(
      nonceBefore,
    );

    // Once deployed, the early signature pays.
    await deployForwarder(l1, undeployed);
    const txHash = await relay({ refund: early, signature: earlySignature });
    await awaitForwarderRefund(l1.publicClient, { refund: early, txHash });
    expect(await balanceOf(l1, funded.token, early.to)).toBe(1_000_000n);
  });

  it('relayForwarderRefund sends exactly the refund call through the sender it is given, and calls it not at all for a refusal', async () => {
    const payout = privateKeyToAccount(generatePrivateKey());
    const funded = await fundedForwarder(payout.address);
    const refund = refundOf(funded);
    const signed = { refund, signature: await sign(payout, refund) };
    const sent: { to: Address; data: Hex }[] = [];
    const recordingSend = (call: { to: Address; data: Hex }) => {
      sent.push(call);
      return sendFromOperator(call);
    };

    const tooMuch = refundOf(funded, { amount: funded.balance + 1n });
    await expect(
      relayForwarderRefund(
        operator,
        { refund: tooMuch, signature: await sign(payout, tooMuch) },
        { send: recordingSend },
      ),
    ).rejects.toThrow(ForwarderRefundRefusedError);
    expect(sent).toEqual([]);

    const txHash = await relayForwarderRefund(operator, signed, { send: recordingSend });
    expect(sent).toEqual([encodeForwarderRefundCall(signed)]);
    expect(sent[0]!.to).toBe(funded.forwarder);
    await awaitForwarderRefund(l1.publicClient, { refund, txHash });
    expect(await balanceOf(l1, funded.token, refund.to)).toBe(refund.amount);
  });

  it('awaitForwarderRefund fails a reverted transaction and one that paid another refund', async () => {
    const payout = privateKeyToAccount(generatePrivateKey());
    const funded = await fundedForwarder(payout.address);
    const refund = refundOf(funded);
    const signature = await sign(payout, refund);
    const paidHash = await relay({ refund, signature });
    await expect(
      awaitForwarderRefund(l1.publicClient, {
        refund: { ...refund, amount: refund.amount + 1n },
        txHash: paidHash,
      }),
    ).rejects.toThrow(
      new ForwarderRefundFailedError(
        paidHash,
        `emitted no Refunded event of forwarder ${funded.forwarder} for refund ${refund.refundId}`,
      ),
    );

    const wallet = l1.wallet('operator');
    const replayHash = await wallet.writeContract({
      ...refundCall(refund, signature),
      gas: 500_000n,
      account: wallet.account,
      chain: wallet.chain,
    });
    await expect(awaitForwarderRefund(l1.publicClient, { refund, txHash: replayHash })).rejects.toThrow(
      `Refund transaction ${replayHash} reverted.`,
    );
    expect(await balances(funded, refund.to)).toEqual({
      forwarder: 7_500_000n,
      to: 2_500_000n,
      merchant: 0n,
    });
  });
});

/** Deterministic pseudo-random bytes: keccak256(seed, label, counter). */
function fuzzer(seed: string) {
  let counter = 0;
  const bytes = (label: string): Hex => keccak256(toHex(`${seed}:${label}:${counter++}`));
  return {
    bytes,
    below: (label: string, bound: number) => Number(hexToBigInt(bytes(label)) % BigInt(bound)),
    address: (label: string): Address => getAddress(slice(bytes(label), 12)),
  };
}

/**
 * Every way one refund's true signature can be wrong: another key, one field of the struct or domain
 * changed, or the signature's bytes changed (flipped, cut, extended, or the malleable high-s twin).
 */
async function fuzzSignatureCheck(
  funded: FundedForwarder,
  payoutSigner: PrivateKeyAccount,
  cases: number,
  seed: string,
): Promise<void> {
  const random = fuzzer(seed);
  const refund = refundOf(funded, {
    to: random.address('to'),
    amount: 1n + BigInt(random.below('amount', 9_000_000)),
  });
  const trueSignature = await sign(payoutSigner, refund);
  const mutateField = (): ForwarderRefund => {
    const field = random.below('field', 6);
    switch (field) {
      case 0:
        return { ...refund, forwarder: random.address('forwarder') };
      case 1:
        return { ...refund, token: random.address('token') };
      case 2:
        return { ...refund, to: random.address('to') };
      case 3:
        return { ...refund, amount: refund.amount + 1n + BigInt(random.below('delta', 1_000_000_000)) };
      case 4:
        return { ...refund, refundId: random.bytes('refundId') };
      default:
        return { ...refund, chainId: 1 + random.below('chainId', 2_000_000) };
    }
  };
  const mutateBytes = (): Hex => {
    const kind = random.below('kind', 4);
    const length = size(trueSignature);
    if (kind === 0) {
      const position = random.below('position', length);
      const flip = 1 + random.below('flip', 255);
      const byte = Number(hexToBigInt(slice(trueSignature, position, position + 1))) ^ flip;
      return concat([
        slice(trueSignature, 0, position),
        numberToHex(byte, { size: 1 }),
        ...(position + 1 < length ? [slice(trueSignature, position + 1)] : []),
      ]);
    }
    if (kind === 1) return slice(trueSignature, 0, random.below('cut', length));
    if (kind === 2)
      return concat([trueSignature, slice(random.bytes('extra'), 0, 1 + random.below('extraLength', 31))]);
    const s = hexToBigInt(slice(trueSignature, 32, 64));
    const v = Number(hexToBigInt(slice(trueSignature, 64, 65)));
    return concat([
      slice(trueSignature, 0, 32),
      numberToHex(SECP256K1_N - s, { size: 32 }),
      numberToHex(v === 27 ? 28 : 27, { size: 1 }),
    ]);
  };

  for (let index = 0; index < cases; index++) {
    const kind = index % 3;
    let signature: Hex;
    let label: string;
    if (kind === 0) {
      const key = random.bytes('key');
      signature = await sign(privateKeyToAccount(key), refund);
      label = `case ${index}: key ${key}`;
    } else if (kind === 1) {
      const signedFor = mutateField();
      signature = await sign(payoutSigner, signedFor);
      label = `case ${index}: signed for ${JSON.stringify(signedFor, (_k, value: unknown) => (typeof value === 'bigint' ? value.toString() : value))}`;
    } else {
      signature = mutateBytes();
      label = `case ${index}: signature ${signature}`;
    }
    const offChain = await verifyForwarderRefundSignature(l1.publicClient, {
      refund,
      merchant: funded.merchant,
      signature,
    });
    expect([label, offChain.valid]).toEqual([label, false]);
    expect([label, await refusal(refund, signature)]).toEqual([label, 'InvalidRefundSignature']);
  }

  expect(
    await verifyForwarderRefundSignature(l1.publicClient, {
      refund,
      merchant: funded.merchant,
      signature: trueSignature,
    }),
  ).toEqual({
    valid: true,
  });
  expect(await refusal(refund, trueSignature)).toBeUndefined();
  await send(l1, 'operator', refundCall(refund, trueSignature));
  expect(await balances(funded, refund.to)).toEqual({
    forwarder: funded.balance - refund.amount,
    to: refund.amount,
    merchant: 0n,
  });
}

describe('fuzz of the signature check', () => {
  const seed = process.env.REFUND_FUZZ_SEED ?? 'issue-41';

  beforeAll(() => {
    process.stdout.write(`\nforwarder refund fuzz seed: ${seed} (set REFUND_FUZZ_SEED to replay another)\n`);
  });

  it('fuzz: random keys, struct and domain mutations and signature byte mutations are all refused for a payout EOA; only the true signature pays', async () => {
    const payout = privateKeyToAccount(generatePrivateKey());
    const funded = await fundedForwarder(payout.address);
    await fuzzSignatureCheck(funded, payout, 150, `${seed}:eoa`);
  }, 180_000);

  it('fuzz: the same mutations are all refused for an ERC-1271 payout contract; only its owner’s true signature pays', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const funded = await fundedForwarder(await deployContractWallet(owner.address));
    await fuzzSignatureCheck(funded, owner, 60, `${seed}:erc1271`);
  }, 180_000);
});
