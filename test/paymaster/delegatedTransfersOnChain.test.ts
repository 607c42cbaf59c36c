import { type Address, type Hex, decodeErrorResult, getAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { readContract } from 'viem/actions';
import { delegationFrameworkFromContracts } from '../../chain/delegationFramework';
import { hybridDeleGatorAccount } from '../../chain/deleGatorAccounts';
import { delegationManagerAbi, nonceEnforcerAbi } from '../../chain/delegations';
import { gasChargeReference } from '../../db/gasCharges';
import { creditPrepaidBalance } from '../../db/prepaidLedger';
import {
  type KitDelegation,
  kitContracts,
  redeemTransfer,
  rootTransferDelegation,
  signedWithKit,
  wrapRedemption,
} from '../delegation/delegatedTransfers';
import { deployFundedDeleGator, executeAsDeleGator, usdcBalance } from '../delegation/delegatorAccounts';
import { sessionAccountAsSender } from '../delegation/sessionAccountOperations';
import { createPaymasterClient } from './paymasterApi';
import { receiptWorld } from './receiptWorld';
import { type SimpleAccount, publicClientFor } from './smartAccounts';
import {
  type LocalChain,
  type PaymasterClientApi,
  sendAndWait,
  sponsorOperation,
} from './sponsoredOperations';

/**
 * SPEC sponsorship rule 7 end to end on Alto, on a testnet (11155111) and on the mainnet stand-in
 * (chain 1): an owner's HybridDeleGator grants a session account (the session key's own DeleGator,
 * created by its first operation) a 100-token USDC allowance to one payee, signed with MetaMask's
 * toolkit; the session account's user operation, sponsored through pm_getPaymasterData and sent through
 * our bundler proxy, moves 40; the payee gains exactly 40; this file's receipt tracker records the row
 * `onchain_success` with the owner in `reason`, charged once on the mainnet. The bundler's side: once the
 * allowance is used up, and after the owner's `disableDelegation`, Alto's simulation refuses the transfer.
 */

const TOKENS = 1_000_000n; // USDC: 6 decimals
const world = receiptWorld('g');
const { db, chainById, waitForStatusChange } = world;

let testnetApi: PaymasterClientApi;
let mainnetApi: PaymasterClientApi;
let merchantId: string;

beforeAll(async () => {
  const sponsor = await world.start({ trackedChainIds: [11155111, 1] });
  merchantId = sponsor.merchant.merchantId;
  testnetApi = sponsor;
  // The mainnet needs a live client and a prepaid balance; USDC is allowlisted on every chain already.
  const live = await createPaymasterClient(sponsor.app, sponsor.merchant, {
    environment: 'live',
    allowedChainIds: [1],
  });
  mainnetApi = { app: sponsor.app, clientId: live.clientId };
  await creditPrepaidBalance(db, { merchantId, amountUsd: '100', description: 'test top-up' });
}, 240_000);
afterAll(() => world.stop());

interface Grant {
  chain: LocalChain;
  owner: ReturnType<typeof privateKeyToAccount>;
  ownerKey: Hex;
  delegator: Address;
  session: SimpleAccount;
  payee: Address;
}

/** The owner's funded DeleGator, the session account (counterfactual) and a fresh payee. */
async function ownerAndSession(chain: LocalChain): Promise<Grant> {
  const ownerKey = generatePrivateKey();
  const owner = privateKeyToAccount(ownerKey);
  const { account } = await deployFundedDeleGator(chain, owner.address, 1_000n * TOKENS);
  const sessionKey = generatePrivateKey();
  const sessionAccount = hybridDeleGatorAccount({
    owner: privateKeyToAccount(sessionKey).address,
    framework: delegationFrameworkFromContracts(chain.contracts)!,
  });
  const session = sessionAccountAsSender({ privateKey: sessionKey, ...sessionAccount });
  const payee = getAddress(privateKeyToAccount(generatePrivateKey()).address);
  return { chain, owner, ownerKey, delegator: account.address, session, payee };
}

/** A 100-token allowance to the payee for the session account, signed by the owner with the toolkit. */
async function grantAllowance({ chain, ownerKey, delegator, session, payee }: Grant): Promise<KitDelegation> {
  const framework = delegationFrameworkFromContracts(chain.contracts)!;
  const client = publicClientFor(chain.rpcUrl);
  const nonce = await readContract(client, {
    address: framework.nonceEnforcer,
    abi: nonceEnforcerAbi,
    functionName: 'currentNonce',
    args: [framework.delegationManager, delegator],
  });
  const { timestamp } = await client.getBlock();
  return signedWithKit(
    ownerKey,
    rootTransferDelegation(framework, {
      delegator,
      delegate: session.address,
      token: chain.contracts.usdc!,
      allowance: 100n * TOKENS,
      payee,
      expiresAt: Number(timestamp) + 3600,
      redeemer: session.address,
      nonce,
    }),
    { chainId: chain.chainId, delegationManager: framework.delegationManager },
  );
}

const transferCallData = (grant: Grant, delegation: KitDelegation, amount: bigint): Hex =>
  wrapRedemption(
    'erc7579Single',
    delegationFrameworkFromContracts(grant.chain.contracts)!.delegationManager,
    redeemTransfer({
      delegations: [delegation],
      token: grant.chain.contracts.usdc!,
      payee: grant.payee,
      amount,
    }),
  );

async function sponsoredTransfer(
  api: PaymasterClientApi,
  grant: Grant,
  delegation: KitDelegation,
  amount: bigint,
  nonce: bigint,
) {
  const { operation } = await sponsorOperation(
    api,
    grant.chain,
    grant.session,
    transferCallData(grant, delegation, amount),
    { gasMargin: true, nonce },
  );
  return sendAndWait(api, grant.chain, '0.7', operation);
}

async function expectOneRecordedDelegatedOperation(grant: Grant, userOpHash: Hex) {
  const row = await waitForStatusChange(userOpHash, grant.chain);
  expect(row).toMatchObject({
    status: 'onchain_success',
    mode: 'sponsored',
    chain_id: grant.chain.chainId,
    sender: grant.session.address.toLowerCase(),
    reason: `delegated_by:${grant.delegator.toLowerCase()}`,
  });
  const rows = await db
    .selectFrom('paymaster_usage')
    .select('id')
    .where('user_op_hash', '=', userOpHash.toLowerCase())
    .execute();
  expect(rows).toHaveLength(1);
  return row;
}

/** The revert Alto's simulation reported when refusing the operation's estimation, decoded with the manager's ABI. */
async function simulationRevert(attempt: Promise<unknown>): Promise<string> {
  const error = await attempt.then(
    () => {
      throw new Error('the bundler accepted the operation');
    },
    (refusal: Error) => refusal,
  );
  expect(error.message).toMatch(
    /^eth_estimateUserOperationGas through the bundler proxy answered 200: .*reverted during simulation/,
  );
  const data = /reason: (0x[0-9a-fA-F]+)/.exec(error.message)![1] as Hex;
  const decoded = decodeErrorResult({ abi: delegationManagerAbi, data }) as {
    errorName: string;
    args?: readonly unknown[];
  };
  return decoded.errorName === 'Error' ? `Error: ${String(decoded.args![0])}` : decoded.errorName;
}

const chargesOf = async (usageId: string) => ({
  charges: await db.selectFrom('gas_charges').select('id').where('usage_id', '=', usageId).execute(),
  debits: await db
    .selectFrom('prepaid_ledger_entries')
    .select('id')
    .where('reference', '=', gasChargeReference(usageId))
    .execute(),
});

describe.each([
  ['a testnet', 11155111, () => testnetApi],
  ['the mainnet stand-in', 1, () => mainnetApi],
] as const)('a delegated transfer sponsored on %s (chain %i)', (_name, chainId, api) => {
  it('moves exactly 40 of a 100-token allowance to the payee; the row is onchain_success with the owner in reason, charged once', async () => {
    const grant = await ownerAndSession(chainById(chainId));
    const delegation = await grantAllowance(grant);
    const ownerBefore = await usdcBalance(grant.chain, grant.delegator);

    const inclusion = await sponsoredTransfer(api(), grant, delegation, 40n * TOKENS, 0n);
    expect(inclusion.success).toBe(true);
    expect(await usdcBalance(grant.chain, grant.payee)).toBe(40n * TOKENS);
    expect(await usdcBalance(grant.chain, grant.delegator)).toBe(ownerBefore - 40n * TOKENS);

    const row = await expectOneRecordedDelegatedOperation(grant, inclusion.userOpHash);
    const { charges, debits } = await chargesOf(row.id);
    // Mainnet operations are charged to the prepaid balance once; testnet operations never are.
    expect(charges).toHaveLength(chainId === 1 ? 1 : 0);
    expect(debits).toHaveLength(chainId === 1 ? 1 : 0);
  });
});

describe('the bundler’s simulation checks the remaining allowance and on-chain revocation (chain 11155111)', () => {
  it('refuses the transfer once the allowance is used up, and after the owner disables the delegation', async () => {
    const grant = await ownerAndSession(chainById(11155111));
    const delegation = await grantAllowance(grant);
    expect((await sponsoredTransfer(testnetApi, grant, delegation, 40n * TOKENS, 0n)).success).toBe(true);
    expect((await sponsoredTransfer(testnetApi, grant, delegation, 60n * TOKENS, 1n)).success).toBe(true);
    expect(await usdcBalance(grant.chain, grant.payee)).toBe(100n * TOKENS);

    // The paymaster's policy reads only the signed terms (1 ≤ 100 fits); Alto's simulation sees 100 spent.
    expect(await simulationRevert(sponsoredTransfer(testnetApi, grant, delegation, 1n, 2n))).toBe(
      'Error: ERC20TransferAmountEnforcer:allowance-exceeded',
    );

    // A second grant, revoked by the owner's DeleGator through the manager's disableDelegation.
    const revoked = await grantAllowance(grant);
    await executeAsDeleGator(grant.chain, grant.owner, grant.delegator, {
      target: delegationFrameworkFromContracts(grant.chain.contracts)!.delegationManager,
      value: 0n,
      data: kitContracts.DelegationManager.encode.disableDelegation({ delegation: revoked }),
    });
    expect(await simulationRevert(sponsoredTransfer(testnetApi, grant, revoked, 1n, 2n))).toBe(
      'CannotUseADisabledDelegation',
    );
    expect(await usdcBalance(grant.chain, grant.payee)).toBe(100n * TOKENS);
  });
});
