import { randomUUID } from 'node:crypto';
import {
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  http,
  parseEventLogs,
  zeroAddress,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ForwarderFactory, Forwarder } from '../../contracts/artifacts';
import { type LocalChainDeployment, deployLocalChain } from '../../dev/chains/deployLocalChain';
import { predictDepositAddress, sessionIdToBytes16 } from '../../chain/depositAddress';
import { forwarderFactoryAddresses } from '../../chain/forwarderFactory';
import {
  ANVIL_DEV_ACCOUNTS,
  type StartAnvilChainsReturnType,
  startAnvilChains,
} from '../../dev/services/anvil';

const CHAIN_IDS = [31337, 31338] as const;
const deployer = ANVIL_DEV_ACCOUNTS[0];
const merchant: Address = '0x000000000000000000000000000000000000bEEF';
const otherMerchant: Address = '0x000000000000000000000000000000000000cafE';

let anvil: StartAnvilChainsReturnType;
const deployments = new Map<number, { rpcUrl: string; contracts: LocalChainDeployment }>();

beforeAll(async () => {
  anvil = await startAnvilChains({ chains: CHAIN_IDS.map((chainId) => ({ chainId })), silent: true });
  for (const { chainId, rpcUrl } of anvil.chains) {
    const contracts = await deployLocalChain({ rpcUrl, chainId, deployerPrivateKey: deployer.privateKey });
    deployments.set(chainId, { rpcUrl, contracts });
  }
});

afterAll(async () => {
  await anvil?.stop();
});

function clientsFor(chainId: number) {
  const deployment = deployments.get(chainId);
  if (!deployment) throw new Error(`no deployment for chain ${chainId}`);
  const chain = defineChain({
    id: chainId,
    name: `test ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [deployment.rpcUrl] } },
  });
  const transport = http(deployment.rpcUrl);
  return {
    ...deployment.contracts,
    publicClient: createPublicClient({ chain, transport, pollingInterval: 50 }),
    walletClient: createWalletClient({ chain, transport, account: privateKeyToAccount(deployer.privateKey) }),
  };
}

function onChainPredict(chainId: number, sessionId: string, payout: Address): Promise<Address> {
  const { publicClient, forwarderFactory } = clientsFor(chainId);
  return publicClient.readContract({
    address: forwarderFactory,
    abi: ForwarderFactory.abi,
    functionName: 'predict',
    args: [sessionIdToBytes16(sessionId), payout],
  });
}

function offChainPredict(chainId: number, sessionId: string, payout: Address): Address {
  const { forwarderFactory, forwarderImplementation } = clientsFor(chainId);
  return predictDepositAddress({
    factory: forwarderFactory,
    implementation: forwarderImplementation,
    sessionId,
    chainId,
    merchant: payout,
  });
}

async function deployForwarder(chainId: number, sessionId: string, payout: Address) {
  const { publicClient, walletClient, forwarderFactory } = clientsFor(chainId);
  const args = [sessionIdToBytes16(sessionId), payout] as const;
  const { result } = await publicClient.simulateContract({
    account: walletClient.account,
    address: forwarderFactory,
    abi: ForwarderFactory.abi,
    functionName: 'deploy',
    args,
  });
  const hash = await walletClient.writeContract({
    address: forwarderFactory,
    abi: ForwarderFactory.abi,
    functionName: 'deploy',
    args,
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  const events = parseEventLogs({
    abi: ForwarderFactory.abi,
    logs: receipt.logs,
    eventName: 'ForwarderDeployed',
  });
  return { returned: result, status: receipt.status, events };
}

describe('ForwarderFactory deployment', () => {
  it('lands at the same factory and implementation address on every chain, the one computed off-chain', () => {
    const expected = forwarderFactoryAddresses(deployer.address);
    for (const chainId of CHAIN_IDS) {
      const { forwarderFactory, forwarderImplementation } = clientsFor(chainId);
      expect(forwarderFactory).toBe(expected.forwarderFactory);
      expect(forwarderImplementation).toBe(expected.forwarderImplementation);
    }
  });

  it('a second deployLocalChain changes nothing and sends no transaction', async () => {
    const chainId = CHAIN_IDS[0];
    const { publicClient } = clientsFor(chainId);
    const { rpcUrl } = deployments.get(chainId)!;
    const nonceBefore = await publicClient.getTransactionCount({ address: deployer.address });
    const again = await deployLocalChain({ rpcUrl, chainId, deployerPrivateKey: deployer.privateKey });
    expect(again).toEqual(deployments.get(chainId)!.contracts);
    expect(await publicClient.getTransactionCount({ address: deployer.address })).toBe(nonceBefore);
  });

  it('the implementation refuses to report clone arguments it does not have', async () => {
    const { publicClient, forwarderImplementation } = clientsFor(CHAIN_IDS[0]);
    await expect(
      publicClient.readContract({
        address: forwarderImplementation,
        abi: Forwarder.abi,
        functionName: 'merchant',
      }),
    ).rejects.toThrow(/NotAClone/);
  });
});

describe('deposit address of a session', () => {
  it('predictDepositAddress equals the factory predict on each chain', async () => {
    const sessionId = randomUUID();
    for (const chainId of CHAIN_IDS) {
      expect(offChainPredict(chainId, sessionId, merchant)).toBe(
        await onChainPredict(chainId, sessionId, merchant),
      );
    }
  });

  it('deploy creates the forwarder exactly at the predicted address, bound to merchant and session', async () => {
    const chainId = CHAIN_IDS[0];
    const sessionId = randomUUID();
    const predicted = offChainPredict(chainId, sessionId, merchant);
    const { publicClient } = clientsFor(chainId);
    expect(await publicClient.getCode({ address: predicted })).toBeUndefined();

    const { returned, status, events } = await deployForwarder(chainId, sessionId, merchant);
    expect(status).toBe('success');
    expect(returned).toBe(predicted);
    expect(events).toHaveLength(1);
    expect(events[0]!.args).toEqual({
      sessionId: sessionIdToBytes16(sessionId),
      merchant,
      forwarder: predicted,
    });

    const code = await publicClient.getCode({ address: predicted });
    // 45 bytes of ERC-1167 proxy plus 36 bytes of immutable arguments.
    expect(code?.length).toBe(2 + (45 + 36) * 2);
    const { forwarderImplementation } = clientsFor(chainId);
    expect(code?.toLowerCase()).toContain(forwarderImplementation.slice(2).toLowerCase());
    expect(
      await publicClient.readContract({ address: predicted, abi: Forwarder.abi, functionName: 'merchant' }),
    ).toBe(merchant);
    expect(
      await publicClient.readContract({ address: predicted, abi: Forwarder.abi, functionName: 'sessionId' }),
    ).toBe(sessionIdToBytes16(sessionId));
  });

  it('funds sent before the deployment stay at the address the forwarder then occupies', async () => {
    const chainId = CHAIN_IDS[1];
    const sessionId = randomUUID();
    const predicted = offChainPredict(chainId, sessionId, merchant);
    const { publicClient, walletClient } = clientsFor(chainId);
    const hash = await walletClient.sendTransaction({ to: predicted, value: 123_456_789n });
    await publicClient.waitForTransactionReceipt({ hash });

    const { returned, status } = await deployForwarder(chainId, sessionId, merchant);
    expect(status).toBe('success');
    expect(returned).toBe(predicted);
    expect(await publicClient.getBalance({ address: predicted })).toBe(123_456_789n);
    expect(await publicClient.getCode({ address: predicted })).not.toBeUndefined();
  });

  it('a second deploy is harmless: same address, no event, no revert', async () => {
    const chainId = CHAIN_IDS[0];
    const sessionId = randomUUID();
    const first = await deployForwarder(chainId, sessionId, merchant);
    const second = await deployForwarder(chainId, sessionId, merchant);
    expect(first.events).toHaveLength(1);
    expect(second.status).toBe('success');
    expect(second.returned).toBe(first.returned);
    expect(second.events).toHaveLength(0);
  });

  it('differs between chains for the same session, and the factory on each chain agrees', async () => {
    const sessionId = randomUUID();
    const first = offChainPredict(CHAIN_IDS[0], sessionId, merchant);
    const second = offChainPredict(CHAIN_IDS[1], sessionId, merchant);
    expect(first).not.toBe(second);
    expect(await onChainPredict(CHAIN_IDS[1], sessionId, merchant)).toBe(second);

    const deployed = await deployForwarder(CHAIN_IDS[1], sessionId, merchant);
    expect(deployed.returned).toBe(second);
    expect(await clientsFor(CHAIN_IDS[0]).publicClient.getCode({ address: second })).toBeUndefined();
  });

  it('differs between sessions on the same chain', async () => {
    const chainId = CHAIN_IDS[0];
    const [a, b] = [randomUUID(), randomUUID()];
    expect(offChainPredict(chainId, a, merchant)).not.toBe(offChainPredict(chainId, b, merchant));
    expect(await onChainPredict(chainId, a, merchant)).not.toBe(await onChainPredict(chainId, b, merchant));
  });

  it('differs for another merchant, so deploying with the wrong merchant cannot occupy the address', async () => {
    const chainId = CHAIN_IDS[0];
    const sessionId = randomUUID();
    const intended = offChainPredict(chainId, sessionId, merchant);
    const other = offChainPredict(chainId, sessionId, otherMerchant);
    expect(other).not.toBe(intended);

    const hijack = await deployForwarder(chainId, sessionId, otherMerchant);
    expect(hijack.returned).toBe(other);
    const { publicClient } = clientsFor(chainId);
    expect(await publicClient.getCode({ address: intended })).toBeUndefined();
    const { returned } = await deployForwarder(chainId, sessionId, merchant);
    expect(returned).toBe(intended);
    expect(
      await publicClient.readContract({ address: intended, abi: Forwarder.abi, functionName: 'merchant' }),
    ).toBe(merchant);
  });

  it('the factory refuses the zero merchant', async () => {
    const { publicClient, walletClient, forwarderFactory } = clientsFor(CHAIN_IDS[0]);
    const args = [sessionIdToBytes16(randomUUID()), zeroAddress] as const;
    await expect(
      publicClient.simulateContract({
        account: walletClient.account,
        address: forwarderFactory,
        abi: ForwarderFactory.abi,
        functionName: 'deploy',
        args,
      }),
    ).rejects.toThrow(/ZeroMerchant/);
    await expect(
      publicClient.readContract({
        address: forwarderFactory,
        abi: ForwarderFactory.abi,
        functionName: 'predict',
        args,
      }),
    ).rejects.toThrow(/ZeroMerchant/);
  });
});
