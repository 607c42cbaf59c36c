import { readFile } from 'node:fs/promises';
import { type Address, type Hex, getAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { smartAccountRegistrationMessage } from '../../api/auth/smartAccountProof';
import { startTestApp, type TestApp } from '../harness/app';
import { freshEmail, waitForCode } from '../harness/mailbox';
import { signInNewMerchant, verifyMerchantEmail, type SignedInMerchant } from '../harness/merchants';
import { testStack } from '../harness/stack';
import { deployFundedDeleGator, usdcBalance } from '../delegation/delegatorAccounts';
import {
  BundlerRefusal,
  type SessionAccount,
  fundSessionAccount,
  redeemTransferThroughAlto,
  sessionAccountAsSender,
} from '../delegation/sessionAccountOperations';
import { encodeDeleGatorExecute } from '../../chain/deleGatorAccounts';
import { encodeRedeemDelegation } from '../../chain/delegations';
import { allowContract, createPaymasterClient, usageRows } from '../paymaster/paymasterApi';
import { sendAndWait, sponsorOperation, usdcCall } from '../paymaster/sponsoredOperations';
import { resultBody, resultText, startToolServer, type ToolServerUnderTest } from './toolServerProcess';

/**
 * create_session_key end to end on a local chain: the tool server generates the key and the permission,
 * the merchant's wallet (the smart account's owner) signs it, and the session key then redeems it
 * itself: its DeleGator account's user operation, paying its own gas through the chain's Alto bundler,
 * moves the merchant's USDC within the allowance and is refused beyond it; or gets that operation
 * sponsored by the merchant's paymaster client (SPEC rule 7) through our RPC and bundler proxy.
 */

const stack = testStack();
const chain = stack.chains.find((candidate) => candidate.chainId === 84532)!;

describe('create_session_key', () => {
  let app: TestApp;
  let server: ToolServerUnderTest;
  let merchant: SignedInMerchant;
  let smartAccount: Address;

  beforeAll(async () => {
    app = await startTestApp({ LOG_LEVEL: 'trace' });
    server = await startToolServer({ apiUrl: app.baseUrl });
    merchant = await signInNewMerchant(app);
    const email = freshEmail('keys');
    await verifyMerchantEmail(app, merchant, email);
    await server.call('login_start', { email });
    resultBody(await server.call('login_verify', { email, code: await waitForCode(email, { count: 2 }) }));
    // The merchant's smart account: a HybridDeleGator owned by its login wallet, holding 100 USDC.
    ({
      account: { address: smartAccount },
    } = await deployFundedDeleGator(chain, merchant.account.address, 100_000_000n));
  });
  afterAll(async () => {
    await server.close();
    await app.close();
  });

  /** The merchant's wallet signs what the first call answered, as eth_signTypedData_v4 would. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function ownerSignature(pending: { typedData: any }, signer = merchant.account): Promise<Hex> {
    const { domain, types, primaryType, message } = pending.typedData;
    return signer.signTypedData({
      domain,
      types,
      primaryType,
      message: { ...message, salt: BigInt(message.salt) },
    });
  }

  /** create_session_key's first call for the merchant's account and local USDC, with `fields` on top. */
  const requestSessionKey = async (fields: Record<string, unknown>) =>
    server.call('create_session_key', {
      smartAccount,
      chainId: chain.chainId,
      token: chain.contracts.usdc,
      registrationSignature: await registrationSignature(merchant.account, merchant.merchantId, smartAccount),
      ...fields,
    });

  /** The owner's proof that the account is the merchant's (what smart-account registration checks). */
  const registrationSignature = (owner: SignedInMerchant['account'], merchantId: string, account: Address) =>
    owner.signMessage({
      message: smartAccountRegistrationMessage({
        merchantId,
        address: getAddress(account),
        chainId: chain.chainId,
      }),
    });

  it('refuses a new session key without the owner’s registration signature, and one that does not prove control', async () => {
    const missing = await server.call('create_session_key', {
      smartAccount,
      chainId: chain.chainId,
      token: chain.contracts.usdc,
      allowance: '1',
      payee: merchant.account.address,
    });
    expect(resultText(missing)).toBe('a new session key needs registrationSignature');
    const stranger = privateKeyToAccount(generatePrivateKey());
    const refused = await requestSessionKey({
      allowance: '1',
      payee: merchant.account.address,
      registrationSignature: await registrationSignature(stranger, merchant.merchantId, smartAccount),
    });
    expect(resultText(refused)).toBe(
      'HTTP 403 Forbidden: The signature does not prove control of the smart account',
    );
  });

  /** The session key as the credentials file holds it. */
  const storedSessionKey = async (id: string) =>
    JSON.parse(await readFile(server.credentialsFile, 'utf8')).sessionKeys.find(
      (key: { id: string }) => key.id === id,
    );

  it('grants a permission the session key redeems by itself: transfers within the allowance, refused above it', async () => {
    const payee = getAddress(privateKeyToAccount(generatePrivateKey()).address);
    const pending = resultBody(await requestSessionKey({ allowance: '10', payee, validForSec: 3600 }));
    expect(pending).toMatchObject({
      status: 'awaiting_owner_signature',
      chainId: '0x14a34',
      address: smartAccount,
      permission: {
        type: 'erc20-token-transfer',
        data: { tokenAddress: chain.contracts.usdc, allowance: '10', allowanceBaseUnits: '10000000', payee },
      },
      typedData: { primaryType: 'Delegation', domain: { name: 'DelegationManager', chainId: chain.chainId } },
    });
    // The smart account is now registered as the merchant's.
    const registered = await app.db
      .selectFrom('smart_accounts')
      .select('merchant_id')
      .where('address', '=', smartAccount.toLowerCase())
      .executeTakeFirstOrThrow();
    expect(registered.merchant_id).toBe(merchant.merchantId);

    const grant = resultBody(
      await server.call('create_session_key', {
        smartAccount,
        sessionKeyId: pending.id,
        ownerSignature: await ownerSignature(pending),
      }),
    );
    expect(grant).toMatchObject({
      id: pending.id,
      status: 'active',
      signer: { type: 'account', data: { address: pending.sessionAccount.address } },
      context: expect.stringMatching(/^0x[0-9a-f]+$/),
    });
    expect(grant.expiry).toBeGreaterThan(Date.now() / 1000 + 3500);

    // The key lives in the credentials file only: never in an answer, never in the API's logs.
    const stored = await storedSessionKey(pending.id);
    expect(privateKeyToAccount(stored.privateKey).address).toBe(grant.sessionKey.address);
    expect(server.transcript.join('\n')).not.toContain(stored.privateKey.slice(2));
    expect([...app.logLines, ...server.stderrLines].join('\n')).not.toContain(stored.privateKey.slice(2));

    const sessionAccount: SessionAccount = { privateKey: stored.privateKey, ...grant.sessionAccount };
    await fundSessionAccount(chain, sessionAccount);
    const before = await usdcBalance(chain, smartAccount);
    const redeem = (amount: bigint) =>
      redeemTransferThroughAlto(chain, sessionAccount, { permissionContext: grant.context, payee, amount });

    expect((await redeem(6_000_000n)).success).toBe(true);
    expect(await usdcBalance(chain, payee)).toBe(6_000_000n);
    await expect(redeem(5_000_000n)).rejects.toThrow(BundlerRefusal);
    await expect(redeem(5_000_000n)).rejects.toThrow(/ERC20TransferAmountEnforcer:allowance-exceeded/);
    expect((await redeem(4_000_000n)).success).toBe(true);
    await expect(redeem(1n)).rejects.toThrow(/allowance-exceeded/);

    expect(await usdcBalance(chain, payee)).toBe(10_000_000n);
    expect(await usdcBalance(chain, smartAccount)).toBe(before - 10_000_000n);
  });

  it('a session key’s transfer is sponsored by the merchant’s paymaster client (SPEC rule 7), the owner in the usage row', async () => {
    const payee = getAddress(privateKeyToAccount(generatePrivateKey()).address);
    const pending = resultBody(await requestSessionKey({ allowance: '5', payee, validForSec: 3600 }));
    const grant = resultBody(
      await server.call('create_session_key', {
        smartAccount,
        sessionKeyId: pending.id,
        ownerSignature: await ownerSignature(pending),
      }),
    );
    const stored = await storedSessionKey(pending.id);
    // Not funded: the paymaster pays its gas.
    const sender = sessionAccountAsSender({ privateKey: stored.privateKey, ...grant.sessionAccount });
    const { clientId } = await createPaymasterClient(app, merchant, { allowedChainIds: [chain.chainId] });
    await allowContract(app, merchant, chain.chainId, chain.contracts.usdc!);
    const api = { app, clientId };

    const callData = encodeDeleGatorExecute({
      target: grant.signerMeta.delegationManager,
      value: 0n,
      data: encodeRedeemDelegation({
        permissionContext: grant.context,
        execution: {
          target: chain.contracts.usdc!,
          value: 0n,
          data: usdcCall('transfer', payee, 2_500_000n),
        },
      }),
    });
    const { operation } = await sponsorOperation(api, chain, sender, callData, { gasMargin: true });
    const inclusion = await sendAndWait(api, chain, '0.7', operation);
    expect(inclusion.success).toBe(true);
    expect(await usdcBalance(chain, payee)).toBe(2_500_000n);
    expect(
      (await usageRows(app, merchant)).find((row) => row.userOpHash === inclusion.userOpHash),
    ).toMatchObject({
      status: expect.stringMatching(/^(submitted|onchain_success)$/),
      mode: 'sponsored',
      reason: `delegated_by:${smartAccount.toLowerCase()}`,
    });
  });

  it('refuses a signature that is not the smart account owner’s, and keeps the key pending', async () => {
    const pending = resultBody(await requestSessionKey({ allowance: '1', payee: merchant.account.address }));
    const stranger = privateKeyToAccount(generatePrivateKey());
    const refused = await server.call('create_session_key', {
      smartAccount,
      sessionKeyId: pending.id,
      ownerSignature: await ownerSignature(pending, stranger),
    });
    expect(refused.isError).toBe(true);
    expect(resultText(refused)).toMatch(/not the smart account owner's signature/);
    expect((await storedSessionKey(pending.id)).status).toBe('awaiting_owner_signature');
  });

  it('refuses a smart account another merchant registered (409), and an amount finer than the token', async () => {
    const other = await signInNewMerchant(app);
    const { account } = await deployFundedDeleGator(chain, other.account.address, 0n);
    // Registered with the proof of control the route asks for: the owner's signature, checked by the DeleGator (ERC-1271).
    const registered = await app.request('/v1/merchants/me/smart-accounts', {
      method: 'POST',
      headers: other.auth,
      json: {
        address: account.address,
        chainId: chain.chainId,
        signature: await other.account.signMessage({
          message: smartAccountRegistrationMessage({
            merchantId: other.merchantId,
            address: account.address,
            chainId: chain.chainId,
          }),
        }),
      },
    });
    expect(registered.status).toBe(204);
    const request = { chainId: chain.chainId, token: chain.contracts.usdc, payee: merchant.account.address };
    const claimed = await server.call('create_session_key', {
      ...request,
      smartAccount: account.address,
      allowance: '1',
      // A valid proof (the account's owner signs), but the account is another merchant's.
      registrationSignature: await registrationSignature(other.account, merchant.merchantId, account.address),
    });
    expect(resultText(claimed)).toBe('HTTP 409 Conflict: Smart account already claimed by another merchant');
    const tooFine = await server.call('create_session_key', {
      ...request,
      smartAccount,
      allowance: '0.0000001',
      registrationSignature: await registrationSignature(merchant.account, merchant.merchantId, smartAccount),
    });
    expect(resultText(tooFine)).toMatch(/^allowance: "0.0000001" has more than 6 decimals/);
  });
});
