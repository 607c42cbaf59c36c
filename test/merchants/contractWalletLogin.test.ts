import { type Address, type Hex, serializeErc6492Signature } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { findFreePort } from '../../dev/services/freePort';
import { startTestApp, type TestApp } from '../harness/app';
import { testStack } from '../harness/stack';
import { contractWalletChain, type ContractWalletChain } from './contractWallets';

/**
 * Issue 3: "signatures of smart-contract wallets are accepted too (ERC-1271 and ERC-6492, through viem
 * against the configured chain)". The wallet (not its owner) is the merchant; the server verifies on the
 * chain the payload names, through RPC_URL_<chainId> (the local anvil chains here; the Base mainnet id 8453 has none).
 */

const WALLET_CHAIN_ID = 84532;
const OTHER_LOCAL_CHAIN_ID = 421614;
const CHAIN_WITHOUT_RPC = 8453;
const BAD_SIGNATURE_BODY = {
  statusCode: 401,
  message: 'Signature does not match the login payload',
  error: 'Unauthorized',
};

const freshAccount = () => privateKeyToAccount(generatePrivateKey());

describe('wallet login with smart-contract wallets (ERC-1271, ERC-6492)', () => {
  let app: TestApp;
  let wallets: ContractWalletChain;

  beforeAll(async () => {
    app = await startTestApp();
    const chain = testStack().chains.find((candidate) => candidate.chainId === WALLET_CHAIN_ID);
    if (!chain) throw new Error(`the test stack has no chain ${WALLET_CHAIN_ID}`);
    wallets = await contractWalletChain(chain);
  });
  afterAll(() => app.close());

  async function getPayload(address: Address, chainId: number, on: TestApp = app) {
    const response = await on.request(`/v1/auth/login-payload?address=${address}&chainId=${chainId}`);
    expect(response.status).toBe(200);
    const { message, ...payload } = response.body;
    expect(payload).toMatchObject({ address, chainId });
    return { message: message as string, payload };
  }

  const verify = (payload: unknown, signature: Hex, on: TestApp = app) =>
    on.request('/v1/auth/verify', { method: 'POST', json: { payload, signature } });

  const merchantRows = (address: Address) =>
    app.db
      .selectFrom('merchants')
      .select(['id', 'wallet_address'])
      .where('wallet_address', '=', address.toLowerCase())
      .execute();

  describe('a deployed contract wallet (ERC-1271)', () => {
    it("logs in with its owner's signature; the merchant is keyed by the wallet, not the owner", async () => {
      const owner = freshAccount();
      const wallet = await wallets.deployWallet(owner.address);
      const { message, payload } = await getPayload(wallet, WALLET_CHAIN_ID);
      const signature = await owner.signMessage({ message });
      expect(await wallets.acceptsSignature(wallet, message, signature)).toBe(true);

      const response = await verify(payload, signature);
      expect(response.status).toBe(200);
      expect(response.body.merchant).toMatchObject({ walletAddress: wallet, payoutAddress: wallet });
      expect(await merchantRows(wallet)).toEqual([
        { id: response.body.merchant.id, wallet_address: wallet.toLowerCase() },
      ]);
      expect(await merchantRows(owner.address)).toEqual([]);

      const profile = await app.request('/v1/merchants/me', {
        headers: { authorization: `Bearer ${response.body.token}` },
      });
      expect(profile.status).toBe(200);
      expect(profile.body).toMatchObject({ id: response.body.merchant.id, walletAddress: wallet });

      // A later login of the same wallet is the same merchant.
      const again = await getPayload(wallet, WALLET_CHAIN_ID);
      const second = await verify(again.payload, await owner.signMessage({ message: again.message }));
      expect(second.status).toBe(200);
      expect(second.body.merchant.id).toBe(response.body.merchant.id);
    });

    it('refuses a signature by anyone but the owner (401) and keeps the nonce for the honest one', async () => {
      const owner = freshAccount();
      const wallet = await wallets.deployWallet(owner.address);
      const { message, payload } = await getPayload(wallet, WALLET_CHAIN_ID);
      const byStranger = await freshAccount().signMessage({ message });
      expect(await wallets.acceptsSignature(wallet, message, byStranger)).toBe(false);

      const refused = await verify(payload, byStranger);
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual(BAD_SIGNATURE_BODY);
      expect(await merchantRows(wallet)).toEqual([]);

      expect((await verify(payload, await owner.signMessage({ message }))).status).toBe(200);
    });

    it('is verified on the chain the payload names: on another local chain, where it has no code, 401', async () => {
      const owner = freshAccount();
      const wallet = await wallets.deployWallet(owner.address);
      const { message, payload } = await getPayload(wallet, OTHER_LOCAL_CHAIN_ID);
      const response = await verify(payload, await owner.signMessage({ message }));
      expect(response.status).toBe(401);
      expect(response.body).toEqual(BAD_SIGNATURE_BODY);
      expect(await merchantRows(wallet)).toEqual([]);
    });
  });

  describe('a counterfactual contract wallet (ERC-6492)', () => {
    it('logs in with the wrapped signature, and verifying does not deploy the wallet', async () => {
      const owner = freshAccount();
      const wallet = await wallets.counterfactualWallet(owner.address);
      expect(await wallets.hasCode(wallet.address)).toBe(false);
      const { message, payload } = await getPayload(wallet.address, WALLET_CHAIN_ID);
      const signature = serializeErc6492Signature({
        address: wallets.factory,
        data: wallet.deployCalldata,
        signature: await owner.signMessage({ message }),
      });

      const response = await verify(payload, signature);
      expect(response.status).toBe(200);
      expect(response.body.merchant).toMatchObject({
        walletAddress: wallet.address,
        payoutAddress: wallet.address,
      });
      expect(await merchantRows(wallet.address)).toHaveLength(1);
      expect(await merchantRows(owner.address)).toEqual([]);
      // Verification was an eth_call: nothing was deployed.
      expect(await wallets.hasCode(wallet.address)).toBe(false);
    });

    it("refuses an unwrapped signature, a wrapped stranger's signature and a wrapper that deploys another wallet", async () => {
      const owner = freshAccount();
      const wallet = await wallets.counterfactualWallet(owner.address);
      const { message, payload } = await getPayload(wallet.address, WALLET_CHAIN_ID);
      const ownerSignature = await owner.signMessage({ message });
      const stranger = freshAccount();
      const strangersWallet = await wallets.counterfactualWallet(stranger.address);

      const attempts: [string, Hex][] = [
        ['unwrapped owner signature (nothing to verify against before deployment)', ownerSignature],
        [
          "wrapped stranger's signature",
          serializeErc6492Signature({
            address: wallets.factory,
            data: wallet.deployCalldata,
            signature: await stranger.signMessage({ message }),
          }),
        ],
        [
          "wrapper deploying the stranger's wallet, signed by the stranger",
          serializeErc6492Signature({
            address: wallets.factory,
            data: strangersWallet.deployCalldata,
            signature: await stranger.signMessage({ message }),
          }),
        ],
      ];
      for (const [attempt, signature] of attempts) {
        const response = await verify(payload, signature);
        expect({ attempt, status: response.status, body: response.body }).toEqual({
          attempt,
          status: 401,
          body: BAD_SIGNATURE_BODY,
        });
      }
      expect(await merchantRows(wallet.address)).toEqual([]);
      expect(await wallets.hasCode(wallet.address)).toBe(false);
      expect(await wallets.hasCode(strangersWallet.address)).toBe(false);
    });
  });

  describe('a payload naming a chain without an RPC (8453 in tests): ECDSA only', () => {
    beforeAll(() => {
      expect(app.config[`RPC_URL_${CHAIN_WITHOUT_RPC}`]).toBeUndefined();
    });

    it('cannot verify a contract wallet, deployed or counterfactual: 401 with the SPEC error body', async () => {
      const owner = freshAccount();
      const deployed = await wallets.deployWallet(owner.address);
      const deployedLogin = await getPayload(deployed, CHAIN_WITHOUT_RPC);
      const deployedResponse = await verify(
        deployedLogin.payload,
        await owner.signMessage({ message: deployedLogin.message }),
      );
      expect(deployedResponse.status).toBe(401);
      expect(deployedResponse.body).toEqual(BAD_SIGNATURE_BODY);

      const counterfactual = await wallets.counterfactualWallet(owner.address);
      const counterfactualLogin = await getPayload(counterfactual.address, CHAIN_WITHOUT_RPC);
      const wrapped = serializeErc6492Signature({
        address: wallets.factory,
        data: counterfactual.deployCalldata,
        signature: await owner.signMessage({ message: counterfactualLogin.message }),
      });
      const counterfactualResponse = await verify(counterfactualLogin.payload, wrapped);
      expect(counterfactualResponse.status).toBe(401);
      expect(counterfactualResponse.body).toEqual(BAD_SIGNATURE_BODY);

      expect(await merchantRows(deployed)).toEqual([]);
      expect(await merchantRows(counterfactual.address)).toEqual([]);
    });

    it('still logs a plain EOA in', async () => {
      const account = freshAccount();
      const { message, payload } = await getPayload(account.address, CHAIN_WITHOUT_RPC);
      const response = await verify(payload, await account.signMessage({ message }));
      expect(response.status).toBe(200);
      expect(response.body.merchant).toMatchObject({ walletAddress: account.address });
    });
  });

  it('a plain EOA logs in on a chain with an RPC too (the on-chain validator recovers it)', async () => {
    const account = freshAccount();
    const { message, payload } = await getPayload(account.address, WALLET_CHAIN_ID);
    const response = await verify(payload, await account.signMessage({ message }));
    expect(response.status).toBe(200);
    expect(response.body.merchant).toMatchObject({ walletAddress: account.address });
  });

  it('with the RPC unreachable, an EOA still logs in (ECDSA) and a contract wallet answers 401', async () => {
    const deadRpc = `http://127.0.0.1:${await findFreePort()}`;
    const offline = await startTestApp({ [`RPC_URL_${WALLET_CHAIN_ID}`]: deadRpc });
    try {
      const account = freshAccount();
      const eoaLogin = await getPayload(account.address, WALLET_CHAIN_ID, offline);
      const eoaResponse = await verify(
        eoaLogin.payload,
        await account.signMessage({ message: eoaLogin.message }),
        offline,
      );
      expect(eoaResponse.status).toBe(200);

      const owner = freshAccount();
      const wallet = await wallets.deployWallet(owner.address);
      const walletLogin = await getPayload(wallet, WALLET_CHAIN_ID, offline);
      const walletResponse = await verify(
        walletLogin.payload,
        await owner.signMessage({ message: walletLogin.message }),
        offline,
      );
      expect(walletResponse.status).toBe(401);
      expect(walletResponse.body).toEqual(BAD_SIGNATURE_BODY);
    } finally {
      await offline.close();
    }
  });
});
