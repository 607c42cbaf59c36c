import { setTimeout as delay } from 'node:timers/promises';
import {
  createNonceManager,
  createWalletClient,
  custom,
  defineChain,
  http,
  numberToHex,
  parseEther,
  parseTransaction,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { waitForTransactionReceipt } from 'viem/actions';
import { jsonRpc } from 'viem/nonce';
import { type StartAnvilChainsReturnType, startAnvilChains } from '../services/anvil';
import { deployDeterministic } from '../../chain/deterministicDeployer';
import { withSendsInNonceOrder } from './sendsInNonceOrder';

const CHAIN_ID = 31_392;
let anvil: StartAnvilChainsReturnType;
let rpcUrl: string;

beforeAll(async () => {
  anvil = await startAnvilChains({ chains: [{ chainId: CHAIN_ID }], silent: true });
  rpcUrl = anvil.chains[0]!.rpcUrl;
});

afterAll(async () => {
  await anvil?.stop();
});

/** A fresh funded account's wallet client, and the nonces of its raw sends in the order they left. */
async function recordingWallet() {
  const account = privateKeyToAccount(generatePrivateKey(), {
    nonceManager: createNonceManager({ source: jsonRpc() }),
  });
  const sentNonces: number[] = [];
  const transport = http(rpcUrl, {
    onFetchRequest: async (request) => {
      const body = (await request.clone().json()) as { method: string; params: [Hex] };
      if (body.method === 'eth_sendRawTransaction') sentNonces.push(parseTransaction(body.params[0]).nonce!);
    },
  });
  const chain = defineChain({
    id: CHAIN_ID,
    name: 'in order',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const wallet = withSendsInNonceOrder(
    createWalletClient({ account, chain, transport, pollingInterval: 50 }),
  );
  await wallet.request({
    method: 'anvil_setBalance',
    params: [account.address, numberToHex(parseEther('100'))],
  } as never);
  return { wallet, sentNonces };
}

describe('withSendsInNonceOrder', () => {
  it('sends a wave of concurrent transactions to the chain in nonce order, and every one is mined', async () => {
    const { wallet, sentNonces } = await recordingWallet();
    const hashes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        wallet.sendTransaction({
          to: `0x${(0xd00d00 + i).toString(16).padStart(40, '0')}`,
          value: BigInt(i + 1),
        }),
      ),
    );
    expect(sentNonces).toEqual(Array.from({ length: 20 }, (_, i) => i));
    for (const hash of hashes)
      expect((await waitForTransactionReceipt(wallet, { hash })).status).toBe('success');
  });

  it('orders deterministic deployments too: a wave of deployDeterministic reaches the chain in nonce order', async () => {
    // Gas estimates answered after a random delay, as on a loaded machine: unordered sends would leave
    // in whatever order their estimates came back.
    const account = privateKeyToAccount(generatePrivateKey(), {
      nonceManager: createNonceManager({ source: jsonRpc() }),
    });
    const sentNonces: number[] = [];
    const node = http(rpcUrl)({});
    const transport = custom({
      async request({ method, params }: { method: string; params: unknown }) {
        if (method === 'eth_estimateGas') await delay(Math.floor(Math.random() * 40));
        if (method === 'eth_sendRawTransaction')
          sentNonces.push(parseTransaction((params as [Hex])[0]).nonce!);
        return node.request({ method, params } as never);
      },
    });
    const chain = defineChain({
      id: CHAIN_ID,
      name: 'in order',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } },
    });
    const wallet = withSendsInNonceOrder(
      createWalletClient({ account, chain, transport, pollingInterval: 50 }),
    );
    await wallet.request({
      method: 'anvil_setBalance',
      params: [account.address, numberToHex(parseEther('100'))],
    } as never);
    // Ten distinct contracts (a STOP runtime behind a minimal init code), deployed together as the local
    // settlement set is: each send must go through the wallet's ordered sendTransaction.
    const initCode = '0x600a600c600039600a6000f3000000000000000000000000' as Hex;
    const addresses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        deployDeterministic(wallet, {
          initCode,
          salt: numberToHex(BigInt(account.address) + BigInt(i), { size: 32 }),
        }),
      ),
    );
    expect(new Set(addresses).size).toBe(10);
    expect(sentNonces).toEqual(Array.from({ length: 10 }, (_, i) => i));
  });

  it('lets the sends after a refused one go out', async () => {
    const { wallet, sentNonces } = await recordingWallet();
    const [first, refused, third] = await Promise.allSettled([
      wallet.sendTransaction({ to: '0x000000000000000000000000000000000000d00d', value: 1n }),
      // More ether than the account holds: the chain refuses it.
      wallet.sendTransaction({ to: '0x000000000000000000000000000000000000d00d', value: 10n ** 24n }),
      wallet.sendTransaction({ to: '0x000000000000000000000000000000000000d00d', value: 3n }),
    ]);
    expect([first.status, refused.status, third.status]).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(sentNonces).toHaveLength(3);
    const hash = (third as PromiseFulfilledResult<Hex>).value;
    expect((await waitForTransactionReceipt(wallet, { hash })).status).toBe('success');
  });
});
