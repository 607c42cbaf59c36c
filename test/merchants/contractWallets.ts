import { randomBytes } from 'node:crypto';
import {
  type Address,
  type Hex,
  bytesToHex,
  concat,
  createTestClient,
  defineChain,
  encodeAbiParameters,
  encodeFunctionData,
  getContractAddress,
  hashMessage,
  http,
  parseEther,
  publicActions,
  walletActions,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { deployDeterministic } from '../../chain/deterministicDeployer';
import { OwnedContractWallet, OwnedContractWalletFactory } from '../../contracts/artifacts';

/**
 * OwnedContractWallet fixtures on one local chain, for wallet-login tests: a CREATE2 factory (through
 * the deterministic deployer, so any test file finds the same one), deployed wallets (ERC-1271) and
 * counterfactual ones (ERC-6492). Transactions come from a fresh key funded with anvil_setBalance, so
 * its nonces never collide with other test files' dev accounts.
 */

const FACTORY_SALT: Hex = '0x00000000000000000000000000000000000000000000000000000000000004c1';
const ERC1271_MAGIC_VALUE = '0x1626ba7e';

export interface ContractWalletChain {
  factory: Address;
  /** Deploys a wallet owned by `owner` (fresh salt) and returns its address. */
  deployWallet(owner: Address): Promise<Address>;
  /** A wallet that does not exist yet, with the factory call that would deploy it (ERC-6492 `data`). */
  counterfactualWallet(owner: Address): Promise<{ address: Address; deployCalldata: Hex }>;
  hasCode(address: Address): Promise<boolean>;
  /** What the wallet's own isValidSignature says about an EIP-191 signature of `message`. */
  acceptsSignature(wallet: Address, message: string, signature: Hex): Promise<boolean>;
}

export async function contractWalletChain({
  chainId,
  rpcUrl,
}: {
  chainId: number;
  rpcUrl: string;
}): Promise<ContractWalletChain> {
  const chain = defineChain({
    id: chainId,
    name: `local ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const client = createTestClient({
    mode: 'anvil',
    chain,
    transport: http(rpcUrl),
    account: privateKeyToAccount(generatePrivateKey()),
    pollingInterval: 100,
  })
    .extend(publicActions)
    .extend(walletActions);
  await client.setBalance({ address: client.account.address, value: parseEther('10') });

  const factory = await deployDeterministic(client, {
    initCode: OwnedContractWalletFactory.bytecode,
    salt: FACTORY_SALT,
  });
  const freshSalt = (): Hex => bytesToHex(randomBytes(32));
  const deployCalldataFor = (owner: Address, salt: Hex) =>
    encodeFunctionData({ abi: OwnedContractWalletFactory.abi, functionName: 'deploy', args: [owner, salt] });
  const hasCode = async (address: Address) => ((await client.getCode({ address })) ?? '0x') !== '0x';

  async function predict(owner: Address, salt: Hex): Promise<Address> {
    const predicted = await client.readContract({
      address: factory,
      abi: OwnedContractWalletFactory.abi,
      functionName: 'predict',
      args: [owner, salt],
    });
    // Cross-check the factory against CREATE2 computed here (init code = creation code ‖ abi.encode(owner)).
    const computed = getContractAddress({
      opcode: 'CREATE2',
      from: factory,
      salt,
      bytecode: concat([OwnedContractWallet.bytecode, encodeAbiParameters([{ type: 'address' }], [owner])]),
    });
    if (computed !== predicted) throw new Error(`factory predicts ${predicted}, CREATE2 gives ${computed}`);
    return predicted;
  }

  return {
    factory,
    hasCode,
    async deployWallet(owner) {
      const salt = freshSalt();
      const hash = await client.sendTransaction({ to: factory, data: deployCalldataFor(owner, salt) });
      const receipt = await client.waitForTransactionReceipt({ hash });
      const wallet = await predict(owner, salt);
      if (receipt.status !== 'success' || !(await hasCode(wallet)))
        throw new Error(`wallet deployment failed (${hash})`);
      return wallet;
    },
    async counterfactualWallet(owner) {
      const salt = freshSalt();
      return { address: await predict(owner, salt), deployCalldata: deployCalldataFor(owner, salt) };
    },
    async acceptsSignature(wallet, message, signature) {
      const result = await client.readContract({
        address: wallet,
        abi: OwnedContractWallet.abi,
        functionName: 'isValidSignature',
        args: [hashMessage(message), signature],
      });
      return result === ERC1271_MAGIC_VALUE;
    },
  };
}
