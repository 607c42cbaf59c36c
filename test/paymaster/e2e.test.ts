import { type Address, type Hex, encodeFunctionData, parseEventLogs } from 'viem';
import { getUserOperationHash } from 'viem/account-abstraction';
import { readContract, waitForTransactionReceipt, writeContract } from 'viem/actions';
import { type EntryPointVersion, entryPointAbi } from '../../chain/entryPoints';
import { POSTOP_OVERHEAD_GAS, tokenAmountForGasCost } from '../../chain/paymasterData';
import { ManagedPaymasterV08, TestStablecoin } from '../../contracts/artifacts';
import { type TestApp, startTestApp } from '../harness/app';
import type { SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { usageRows } from './paymasterApi';
import {
  ENTRY_POINTS,
  type SimpleAccount,
  fundedWallet,
  newAccountOn,
  publicClientFor,
} from './smartAccounts';
import {
  type LocalChain,
  sendAndWait,
  signInSponsoringMerchant,
  sponsorOperation,
  usdcCall,
} from './sponsoredOperations';

/**
 * End to end on local chains with a real bundler (Alto): a SimpleAccount's first operation gets stub
 * data from our paymaster RPC, gas estimates through our bundler proxy, signed data from our RPC (the
 * real signing service), is sent through the proxy and included; the paymaster pays. Each case runs
 * on its own chain so cases never share a bundle.
 */

const stack = testStack();
let app: TestApp;
let merchant: SignedInMerchant;
let clientId: string;

beforeAll(async () => {
  app = await startTestApp();
  // The call target of every operation below: the chain's local USDC.
  ({ merchant, clientId } = await signInSponsoringMerchant(app));
});

afterAll(async () => {
  await app?.close();
});

interface Included {
  userOpHash: Hex;
  receipt: { blockNumber: bigint };
}

/**
 * The wallet flow (sponsoredOperations.ts) with the gas limits as estimated, checked on the way: the
 * signed data names the stub's paymaster, the proxy answers the operation's own hash, the call succeeds.
 */
async function sponsorAndSend(
  chain: LocalChain,
  account: SimpleAccount,
  callData: Hex,
  { context, nonce }: { context?: { token: Address }; nonce?: bigint } = {},
): Promise<Included> {
  const { operation, stub } = await sponsorOperation({ app, clientId }, chain, account, callData, {
    context,
    nonce,
  });
  expect(operation.paymaster).toBe(stub.paymaster);
  const { userOpHash, success, blockNumber } = await sendAndWait(
    { app, clientId },
    chain,
    account.version,
    operation,
  );
  expect(userOpHash).toBe(
    getUserOperationHash({
      userOperation: operation,
      entryPointAddress: ENTRY_POINTS[account.version],
      entryPointVersion: account.version,
      chainId: chain.chainId,
    }),
  );
  expect(success).toBe(true);
  return { userOpHash, receipt: { blockNumber } };
}

async function depositAt(
  chain: LocalChain,
  version: EntryPointVersion,
  paymaster: Address,
  blockNumber: bigint,
): Promise<bigint> {
  return readContract(publicClientFor(chain.rpcUrl), {
    address: ENTRY_POINTS[version],
    abi: entryPointAbi,
    functionName: 'balanceOf',
    args: [paymaster],
    blockNumber,
  });
}

async function tokenBalanceAt(chain: LocalChain, holder: Address, blockNumber: bigint): Promise<bigint> {
  return readContract(publicClientFor(chain.rpcUrl), {
    address: chain.contracts.usdc!,
    abi: TestStablecoin.abi,
    functionName: 'balanceOf',
    args: [holder],
    blockNumber,
  });
}

/** Our operation's UserOperationEvent, and every event of the same paymaster in the inclusion block. */
async function paymasterEventsOfBlock(
  chain: LocalChain,
  version: EntryPointVersion,
  paymaster: Address,
  blockNumber: bigint,
) {
  const logs = await publicClientFor(chain.rpcUrl).getLogs({
    address: ENTRY_POINTS[version],
    fromBlock: blockNumber,
    toBlock: blockNumber,
  });
  return parseEventLogs({ abi: entryPointAbi, logs, eventName: 'UserOperationEvent' }).filter(
    (event) => event.args.paymaster === paymaster,
  );
}

describe.each([
  ['0.7', 84532],
  ['0.8', 421614],
] as const)('a sponsored operation on EntryPoint v%s (chain %i)', (version, chainId) => {
  it('is estimated and sent through the proxy, included, and paid from the paymaster deposit by exactly its actualGasCost', async () => {
    const chain = stack.chains.find((candidate) => candidate.chainId === chainId)!;
    const account = await newAccountOn(chain, version);
    const paymaster = version === '0.7' ? chain.contracts.paymasterV07! : chain.contracts.paymasterV08!;

    const { userOpHash, receipt } = await sponsorAndSend(
      chain,
      account,
      account.execute(chain.contracts.usdc!, 0n, usdcCall('mint', account.address, 1_234n)),
    );

    // The call ran: the account (created by this operation) holds what it minted.
    expect(await tokenBalanceAt(chain, account.address, receipt.blockNumber)).toBe(1_234n);
    const events = await paymasterEventsOfBlock(chain, version, paymaster, receipt.blockNumber);
    const ours = events.find((event) => event.args.userOpHash === userOpHash);
    expect(ours?.args).toMatchObject({ sender: account.address, paymaster, success: true });
    // Exactly the gas of the operations it paid for in that block (ours alone, unless a bundle carried others).
    const paidInBlock = events.reduce((sum, event) => sum + event.args.actualGasCost, 0n);
    expect(await depositAt(chain, version, paymaster, receipt.blockNumber - 1n)).toBe(
      (await depositAt(chain, version, paymaster, receipt.blockNumber)) + paidInBlock,
    );
    if (events.length === 1) expect(paidInBlock).toBe(ours!.args.actualGasCost);

    const usage = await usageRows(app, merchant);
    // `submitted` until a receipt tracker (another test file's, on the same chains) records the inclusion.
    expect(usage.find((row) => row.userOpHash === userOpHash)).toMatchObject({
      status: expect.stringMatching(/^(submitted|onchain_success)$/),
      mode: 'sponsored',
      chainId,
    });
  });
});

describe.each(['0.7', '0.8'] as const)(
  'an ERC-20 operation on EntryPoint v%s (chain 11155111)',
  (version) => {
    it('pays its gas in the token once the sender approved the paymaster: the sender loses exactly the amount the contract computed and the paymaster gains it', async () => {
      const chain = stack.chains.find((candidate) => candidate.chainId === 11155111)!;
      const paymaster = version === '0.7' ? chain.contracts.paymasterV07! : chain.contracts.paymasterV08!;
      const usdc = chain.contracts.usdc!;
      // Priced at signing (finding 8): the local feed's 3,000 USD per ether at USDC's peg plus the 10 % margin,
      // i.e. the signer's configured 3,000 per ether × 1.1.
      const rate = (BigInt(stack.signer.erc20Tokens[String(chain.chainId)]![usdc]!) * 11n) / 10n;
      const account = await newAccountOn(chain, version);

      // The account's first operation (sponsored) creates it and approves the paymaster: ERC-20
      // validation takes the tokens before any call of the operation runs, so approval comes first.
      const approve = encodeFunctionData({
        abi: TestStablecoin.abi,
        functionName: 'approve',
        args: [paymaster, 2n ** 256n - 1n],
      });
      await sponsorAndSend(chain, account, account.execute(usdc, 0n, approve));
      const funder = await fundedWallet(chain.rpcUrl, chain.chainId);
      const minted = await writeContract(funder, {
        address: usdc,
        abi: TestStablecoin.abi,
        functionName: 'mint',
        args: [account.address, 50_000_000n],
      });
      await waitForTransactionReceipt(funder, { hash: minted });

      const { userOpHash, receipt } = await sponsorAndSend(
        chain,
        account,
        account.execute(usdc, 0n, usdcCall('mint', account.address, 1n)),
        { context: { token: usdc }, nonce: 1n },
      );

      const logs = await publicClientFor(chain.rpcUrl).getLogs({
        address: paymaster,
        fromBlock: receipt.blockNumber,
        toBlock: receipt.blockNumber,
      });
      const charges = parseEventLogs({ abi: ManagedPaymasterV08.abi, logs, eventName: 'GasChargedInToken' });
      const ours = charges.find((event) => event.args.userOpHash === userOpHash)!;
      expect(ours.args).toMatchObject({ sender: account.address, token: usdc, exchangeRate: rate });
      const { actualGasCost, actualUserOpFeePerGas, tokenAmount } = ours.args;
      expect(tokenAmount).toBe(
        tokenAmountForGasCost(actualGasCost + POSTOP_OVERHEAD_GAS * actualUserOpFeePerGas, rate),
      );
      expect(tokenAmount).toBeGreaterThan(0n);

      // The operation minted 1 base unit to the account; the gas cost in tokens (pre-charged, the
      // difference refunded) went to the paymaster.
      const before = receipt.blockNumber - 1n;
      expect(await tokenBalanceAt(chain, account.address, before)).toBe(50_000_000n);
      expect(await tokenBalanceAt(chain, account.address, receipt.blockNumber)).toBe(
        50_000_000n + 1n - tokenAmount,
      );
      const chargedInBlock = charges
        .filter((event) => event.args.token === usdc)
        .reduce((sum, event) => sum + event.args.tokenAmount, 0n);
      expect(await tokenBalanceAt(chain, paymaster, receipt.blockNumber)).toBe(
        (await tokenBalanceAt(chain, paymaster, before)) + chargedInBlock,
      );
      if (charges.length === 1) expect(chargedInBlock).toBe(tokenAmount);

      // The gas itself came out of the deposit; the token charge is what the sender paid back.
      const events = await paymasterEventsOfBlock(chain, version, paymaster, receipt.blockNumber);
      expect(events.find((event) => event.args.userOpHash === userOpHash)?.args.success).toBe(true);
      expect(await depositAt(chain, version, paymaster, before)).toBe(
        (await depositAt(chain, version, paymaster, receipt.blockNumber)) +
          events.reduce((sum, event) => sum + event.args.actualGasCost, 0n),
      );
      const usage = await usageRows(app, merchant);
      expect(usage.find((row) => row.userOpHash === userOpHash)).toMatchObject({
        status: expect.stringMatching(/^(submitted|onchain_success)$/),
        mode: 'user_paid',
      });
    });
  },
);
