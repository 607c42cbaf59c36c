import entryPointV08Artifact from '@account-abstraction/contracts/artifacts/EntryPoint.json';
import entryPointV07Artifact from '@account-abstraction/contracts-v07/artifacts/EntryPoint.json';
import {
  type Abi,
  type AbiParameter,
  type Address,
  type Hex,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  parseEventLogs,
  toEventSignature,
  toFunctionSignature,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { deployLocalChain } from '../../dev/chains/deployLocalChain';
import {
  DETERMINISTIC_DEPLOYER_ADDRESS,
  DeterministicDeployerMissingError,
  deployDeterministic,
  deterministicDeploymentAddress,
} from '../../chain/deterministicDeployer';
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS, entryPointAbi } from '../../chain/entryPoints';
import {
  ANVIL_DEV_ACCOUNTS,
  type StartAnvilChainsReturnType,
  startAnvilChains,
} from '../../dev/services/anvil';

const MAIN_CHAIN = 31337;
/** A chain whose deterministic deployer is removed by a test. */
const BARE_CHAIN = 31339;
const deployer = ANVIL_DEV_ACCOUNTS[0];
const depositor = ANVIL_DEV_ACCOUNTS[1];

let anvil: StartAnvilChainsReturnType;
const rpcUrls = new Map<number, string>();

beforeAll(async () => {
  anvil = await startAnvilChains({
    chains: [{ chainId: MAIN_CHAIN }, { chainId: BARE_CHAIN }],
    silent: true,
  });
  for (const { chainId, rpcUrl } of anvil.chains) rpcUrls.set(chainId, rpcUrl);
});

afterAll(async () => {
  await anvil?.stop();
});

function clientsFor(chainId: number, account: { privateKey: Hex } = depositor) {
  const rpcUrl = rpcUrls.get(chainId)!;
  const chain = defineChain({
    id: chainId,
    name: `test ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const transport = http(rpcUrl);
  return {
    rpcUrl,
    publicClient: createPublicClient({ chain, transport, pollingInterval: 50 }),
    walletClient: createWalletClient({ chain, transport, account: privateKeyToAccount(account.privateKey) }),
    testClient: createTestClient({ chain, transport, mode: 'anvil' }),
  };
}

describe('EntryPoint deployment on a local chain', () => {
  beforeAll(async () => {
    const { rpcUrl } = clientsFor(MAIN_CHAIN);
    const deployment = await deployLocalChain({
      rpcUrl,
      chainId: MAIN_CHAIN,
      deployerPrivateKey: deployer.privateKey,
    });
    expect(deployment.entryPointV07).toBe(ENTRY_POINT_V07_ADDRESS);
    expect(deployment.entryPointV08).toBe(ENTRY_POINT_V08_ADDRESS);
  });

  it('v0.7 lands at its canonical address 0x0000000071727De22E5E9d8BAf0edAc6f37da032', async () => {
    expect(ENTRY_POINT_V07_ADDRESS).toBe('0x0000000071727De22E5E9d8BAf0edAc6f37da032');
    const code = await clientsFor(MAIN_CHAIN).publicClient.getCode({ address: ENTRY_POINT_V07_ADDRESS });
    // Same length as the artifact's runtime code (the content differs only in its immutables).
    expect(code?.length).toBe(entryPointV07Artifact.deployedBytecode.length);
  });

  it('v0.8 lands at its canonical address 0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108', async () => {
    expect(ENTRY_POINT_V08_ADDRESS).toBe('0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108');
    const code = await clientsFor(MAIN_CHAIN).publicClient.getCode({ address: ENTRY_POINT_V08_ADDRESS });
    expect(code?.length).toBe(entryPointV08Artifact.deployedBytecode.length);
  });

  it.each([
    ['v0.7', ENTRY_POINT_V07_ADDRESS, '0x000000000000000000000000000000000000d701'],
    ['v0.8', ENTRY_POINT_V08_ADDRESS, '0x000000000000000000000000000000000000d801'],
  ] as const)(
    '%s credits depositTo to the account and reports it in balanceOf, to the wei',
    async (_, entryPoint, account) => {
      const { publicClient, walletClient } = clientsFor(MAIN_CHAIN);
      expect(
        await publicClient.readContract({
          address: entryPoint,
          abi: entryPointAbi,
          functionName: 'balanceOf',
          args: [account],
        }),
      ).toBe(0n);

      for (const value of [1_000_000_000_000_000n, 234_567n]) {
        const hash = await walletClient.writeContract({
          address: entryPoint,
          abi: entryPointAbi,
          functionName: 'depositTo',
          args: [account],
          value,
        });
        const receipt = await publicClient.waitForTransactionReceipt({ hash });
        expect(receipt.status).toBe('success');
        const [deposited] = parseEventLogs({
          abi: entryPointAbi,
          logs: receipt.logs,
          eventName: 'Deposited',
        });
        expect(deposited?.args.account).toBe(getAddress(account));
      }

      expect(
        await publicClient.readContract({
          address: entryPoint,
          abi: entryPointAbi,
          functionName: 'balanceOf',
          args: [account],
        }),
      ).toBe(1_000_000_000_234_567n);
      const info = await publicClient.readContract({
        address: entryPoint,
        abi: entryPointAbi,
        functionName: 'getDepositInfo',
        args: [account],
      });
      expect(info).toEqual({
        deposit: 1_000_000_000_234_567n,
        staked: false,
        stake: 0n,
        unstakeDelaySec: 0,
        withdrawTime: 0,
      });
    },
  );

  it.each([
    ['v0.7', ENTRY_POINT_V07_ADDRESS],
    ['v0.8', ENTRY_POINT_V08_ADDRESS],
  ] as const)(
    '%s getNonce answers the key in the high 192 bits and sequence 0 for a new sender',
    async (_, entryPoint) => {
      const { publicClient } = clientsFor(MAIN_CHAIN);
      const sender: Address = '0x00000000000000000000000000000000000a11ce';
      const read = (key: bigint) =>
        publicClient.readContract({
          address: entryPoint,
          abi: entryPointAbi,
          functionName: 'getNonce',
          args: [sender, key],
        });
      expect(await read(0n)).toBe(0n);
      expect(await read(5n)).toBe(5n << 64n);
    },
  );

  it('a second deployLocalChain sends nothing', async () => {
    const { rpcUrl, publicClient } = clientsFor(MAIN_CHAIN);
    const before = await publicClient.getTransactionCount({ address: deployer.address });
    await deployLocalChain({ rpcUrl, chainId: MAIN_CHAIN, deployerPrivateKey: deployer.privateKey });
    expect(await publicClient.getTransactionCount({ address: deployer.address })).toBe(before);
  });
});

/** A parameter's canonical type, tuples spelled out (`(uint256,bool)[]`). */
function canonicalType({ type, ...parameter }: AbiParameter): string {
  if (!type.startsWith('tuple')) return type;
  const components = 'components' in parameter ? parameter.components : [];
  return `(${components.map(canonicalType).join(',')})${type.slice('tuple'.length)}`;
}

/** Everything callers rely on: signature, outputs, mutability, indexed event inputs. */
function describeItem(item: Abi[number]): string | undefined {
  if (item.type === 'function') {
    return `${toFunctionSignature(item)} ${item.stateMutability} returns (${item.outputs.map(canonicalType).join(',')})`;
  }
  if (item.type === 'event') {
    return `${toEventSignature(item)} indexed ${item.inputs.map((input) => Boolean(input.indexed)).join(',')}`;
  }
  return undefined;
}

describe('entryPointAbi', () => {
  it.each([
    ['v0.7', entryPointV07Artifact.abi as Abi],
    ['v0.8', entryPointV08Artifact.abi as Abi],
  ])('matches the %s artifact item for item (inputs, outputs, mutability, indexed)', (_, artifactAbi) => {
    const published = new Set(artifactAbi.map(describeItem));
    const ours = (entryPointAbi as Abi).map(describeItem);
    expect(ours.filter((description) => !published.has(description))).toEqual([]);
    expect(ours).toHaveLength(9);
  });
});

describe('deterministic deployer', () => {
  // Init code of a contract whose runtime code is the single byte 0x2a (PUSH1 1 PUSH1 0x0c PUSH1 0 CODECOPY PUSH1 1 PUSH1 0 RETURN, 0x2a).
  const initCode: Hex = '0x6001600c60003960016000f32a';
  const salt: Hex = `0x${'ab'.repeat(32)}`;

  it('deploys init code at the CREATE2 address it predicts, once', async () => {
    const { publicClient, walletClient } = clientsFor(MAIN_CHAIN, deployer);
    const expected = deterministicDeploymentAddress({ initCode, salt });
    expect(await publicClient.getCode({ address: expected })).toBeUndefined();

    expect(await deployDeterministic(walletClient, { initCode, salt })).toBe(expected);
    expect(await publicClient.getCode({ address: expected })).toBe('0x2a');

    const nonce = await publicClient.getTransactionCount({ address: deployer.address });
    expect(await deployDeterministic(walletClient, { initCode, salt })).toBe(expected);
    expect(await publicClient.getTransactionCount({ address: deployer.address })).toBe(nonce);
  });

  it('fails with DeterministicDeployerMissingError on a chain without the deployer', async () => {
    const { rpcUrl, testClient, walletClient } = clientsFor(BARE_CHAIN, deployer);
    await testClient.setCode({ address: DETERMINISTIC_DEPLOYER_ADDRESS, bytecode: '0x' });

    await expect(deployDeterministic(walletClient, { initCode, salt })).rejects.toThrow(
      DeterministicDeployerMissingError,
    );
    await expect(
      deployLocalChain({ rpcUrl, chainId: BARE_CHAIN, deployerPrivateKey: deployer.privateKey }),
    ).rejects.toThrow(
      /deterministic deployer 0x4e59b44847b379578588920cA78FbF26c0B4956C has no code on chain 31339/,
    );
  });
});
