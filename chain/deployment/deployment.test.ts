import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EndpointId } from '@layerzerolabs/lz-definitions';
import {
  type Address,
  type Hex,
  createNonceManager,
  createTestClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  publicActions,
  walletActions,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { getTransactionCount, readContract } from 'viem/actions';
import { jsonRpc } from 'viem/nonce';
import type { Config } from '../../config';
import { IStakedUSDe, LocalStakedUSDeV2, LocalUSDeOFTAdapter } from '../../contracts/artifacts';
import { yieldNetworkOf } from '../../yield/deployOptions';
import { loadDeployments } from '../deployments';
import { createNetworkRegistry } from '../networkRegistry';
import { yieldVaultFactoryAddress } from '../yieldVaultFactory';
import { ANVIL_DEV_ACCOUNTS } from '../../dev/services/anvil';
import { type LocalChains, startLocalChains } from '../../dev/services/localChains';
import { LOCAL_RELAYER, LOCAL_SETTLEMENT_OPERATOR } from '../../dev/chains/localSettlement';
import { NETWORKS } from '../../config/networks';
import { LAYER_ZERO_EIDS, canonicalAddresses } from './canonicalAddresses';
import {
  type ExternalContracts,
  deploySettlementContracts,
  stakingComposerAddress,
} from './deploySettlement';
import { externalContractsOf } from './main';
import { checkOnChain, compareWithCanonical } from './verifyDeployment';

describe('canonical external addresses', () => {
  it('every network’s LayerZero endpoint id is the one @layerzerolabs/lz-definitions gives it', () => {
    for (const network of NETWORKS)
      expect([network.network, network.layerZeroEid]).toEqual([
        network.network,
        LAYER_ZERO_EIDS[network.network],
      ]);
    expect(LAYER_ZERO_EIDS.ethereum).toBe(EndpointId.ETHEREUM_V2_MAINNET);
  });

  it('mainnets expect LayerZero’s endpoint, Uniswap’s SwapRouter02, the EntryPoints and Ethena’s USDe, sUSDe and USDe OFT', () => {
    const ethereum = canonicalAddresses(1);
    expect(ethereum.layerZeroEndpoint!.address).toBe('0x1a44076050125825900e736c501f859c50fE728c');
    expect(ethereum.layerZeroEndpoint!.source).toMatch(/lz-evm-sdk-v2 deployments\/ethereum-mainnet/);
    expect(ethereum.uniswapSwapRouter02!.address).toBe('0x68b3465833fb72A70ecDF485E0e4C7bD8665Fc45');
    expect(ethereum.entryPointV07!.address).toBe('0x0000000071727De22E5E9d8BAf0edAc6f37da032');
    expect(ethereum.susde!.address).toBe('0x9D39A5DE30e57443BfF2A8307A4256c8797A3497');
    expect(canonicalAddresses(8453).uniswapSwapRouter02!.address).toBe(
      '0x2626664c2603336E57B271c5C0b26F421741e481',
    );
    // Testnets: LayerZero and Uniswap publish addresses, Ethena does not.
    expect(canonicalAddresses(84532).layerZeroEndpoint!.address).toBe(
      '0x6EDCE65403992e310A62460808c4b910D972f10f',
    );
    expect(canonicalAddresses(84532).susde).toBeUndefined();
  });

  it('a configured address that is not the canonical one fails the check, naming the expected address and its source; a missing one fails too', () => {
    const contracts = Object.fromEntries(
      Object.entries(canonicalAddresses(1)).map(([key, { address }]) => [key, address]),
    ) as Record<string, Address>;
    expect(compareWithCanonical(1, contracts).every((finding) => finding.ok)).toBe(true);

    const wrong = { ...contracts, susde: '0x1111111111111111111111111111111111111111' as Address };
    delete (wrong as Record<string, Address>).layerZeroEndpoint;
    const failed = compareWithCanonical(1, wrong).filter((finding) => !finding.ok);
    expect(failed.map((finding) => [finding.check, finding.detail])).toEqual([
      [
        'layerZeroEndpoint is configured',
        expect.stringMatching(
          /^missing; expected 0x1a44076050125825900e736c501f859c50fE728c \(@layerzerolabs/,
        ),
      ],
      [
        'susde is canonical',
        expect.stringMatching(
          /^0x1111111111111111111111111111111111111111 is not 0x9D39A5DE30e57443BfF2A8307A4256c8797A3497/,
        ),
      ],
    ]);
  });

  it('a mainnet deployment needs only the tokens the canonical table lacks; a testnet must name Ethena’s contracts', () => {
    const tokens = {
      usdc: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
      usdt: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
    };
    expect(externalContractsOf(1, tokens)).toMatchObject({
      ...tokens,
      poolFees: { usdc: 100, usdt: 100 },
      susde: '0x9D39A5DE30e57443BfF2A8307A4256c8797A3497',
    });
    expect(() => externalContractsOf(84532, tokens)).toThrow(
      /external contracts of chain 84532: usde: .*usdeOft: /,
    );
    // Ethereum Sepolia has Ethena's published USDe and sUSDe; its USDe OFT is still the operator's to name.
    expect(() => externalContractsOf(11155111, tokens)).toThrow(
      /^external contracts of chain 11155111: usdeOft: /,
    );
  });
});

describe('deploying our contracts against the real protocols', () => {
  const SETTLEMENT = 11155111;
  const LAYER2 = 84532;
  let local: LocalChains;
  const deployer = ANVIL_DEV_ACCOUNTS[5];

  beforeAll(async () => {
    local = await startLocalChains({ chainIds: [SETTLEMENT, LAYER2], protocols: 'real' });
  }, 120_000);
  afterAll(() => local?.stop());

  const chainOf = (chainId: number) => local.chains.find((chain) => chain.chainId === chainId)!;
  /** The local protocols stand where the canonical mainnet ones would: the deployment is pointed at them. */
  const externalOf = (chainId: number): ExternalContracts => {
    const { contracts } = chainOf(chainId);
    return {
      usdc: contracts.usdc!,
      usdt: contracts.usdt!,
      usde: contracts.usde!,
      usdeOft: contracts.usdeOft!,
      susde: contracts.susde,
      layerZeroEndpoint: contracts.layerZeroEndpoint!,
      uniswapSwapRouter02: contracts.uniswapSwapRouter02!,
      entryPointV07: contracts.entryPointV07!,
      entryPointV08: contracts.entryPointV08!,
      poolFees: { usdc: 500, usdt: 500 },
    };
  };
  const walletOn = (chainId: number) => {
    const rpcUrl = chainOf(chainId).rpcUrl;
    return createWalletClient({
      account: privateKeyToAccount(deployer.privateKey, {
        nonceManager: createNonceManager({ source: jsonRpc() }),
      }),
      chain: defineChain({
        id: chainId,
        name: `${chainId}`,
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: { default: { http: [rpcUrl] } },
      }),
      transport: http(rpcUrl),
      pollingInterval: 100,
    });
  };
  const deployOn = (chainId: number) =>
    deploySettlementContracts(walletOn(chainId), {
      chainId,
      owner: deployer.address,
      operator: LOCAL_SETTLEMENT_OPERATOR.address,
      paymasterSigner: LOCAL_RELAYER.address,
      external: externalOf(chainId),
      settlementExternal: externalOf(SETTLEMENT),
    });

  it('deploys and wires the factory, swap adapter, messenger or composer and paymasters; the on-chain checks all pass; a rerun sends nothing', async () => {
    const [settlement, layer2] = await Promise.all([deployOn(SETTLEMENT), deployOn(LAYER2)]);
    // One factory address everywhere (same owner), distinct from the dev stack's.
    expect(settlement.forwarderFactory).toBe(layer2.forwarderFactory);
    expect(settlement.forwarderFactory).not.toBe(chainOf(SETTLEMENT).contracts.forwarderFactory);
    expect(settlement.stakingComposer).toBe(stakingComposerAddress(externalOf(SETTLEMENT)));
    expect(layer2.messenger).toBeDefined();

    for (const [chainId, contracts] of [
      [SETTLEMENT, settlement],
      [LAYER2, layer2],
    ] as const) {
      const findings = await checkOnChain(walletOn(chainId), { chainId, contracts });
      expect(findings.filter((finding) => !finding.ok)).toEqual([]);
      expect(findings.length).toBeGreaterThanOrEqual(11);
      // Locally the protocols are our own deployments, not the canonical ones: the address check says so.
      const endpoint = compareWithCanonical(chainId, contracts).find(
        (finding) => finding.check === 'layerZeroEndpoint is canonical',
      )!;
      expect(endpoint.ok).toBe(false);
    }

    const before = await getTransactionCount(walletOn(LAYER2), { address: deployer.address });
    expect(await deployOn(LAYER2)).toEqual(layer2);
    expect(await getTransactionCount(walletOn(LAYER2), { address: deployer.address })).toBe(before);
  }, 120_000);

  it('a factory that settles through the wrong messenger fails its check', async () => {
    const contracts = {
      ...(await deployOn(LAYER2)),
      messenger: getAddress(chainOf(LAYER2).contracts.usdeOft!),
    };
    const findings = await checkOnChain(walletOn(LAYER2), { chainId: LAYER2, contracts });
    expect(findings.filter((finding) => !finding.ok).map((finding) => finding.check)).toEqual([
      'messenger route to the settlement chain',
      'forwarder factory settlement configuration',
    ]);
  }, 60_000);

  it('the local real-protocol set carries the yield vault factory where its sUSDe is, with Ethena’s cooldown on, as production does', async () => {
    const settlement = chainOf(SETTLEMENT).contracts;
    expect(settlement.yieldVaultFactory).toBe(yieldVaultFactoryAddress());
    expect(chainOf(LAYER2).contracts.yieldVaultFactory).toBeUndefined();
    expect(
      await readContract(walletOn(SETTLEMENT), {
        address: settlement.susde!,
        abi: IStakedUSDe.abi,
        functionName: 'cooldownDuration',
      }),
    ).toBe(7 * 24 * 60 * 60);
  });

  it('the yield vault factory: deployed on the settlement chain only; verify fails one on a layer-2, one that is not this release’s, and one that cannot build a vault over the configured sUSDe', async () => {
    const [settlement, layer2] = await Promise.all([deployOn(SETTLEMENT), deployOn(LAYER2)]);
    expect(settlement.yieldVaultFactory).toBe(yieldVaultFactoryAddress());
    expect(layer2.yieldVaultFactory).toBeUndefined();
    const failedChecks = async (chainId: number, contracts: Record<string, Address>) =>
      (await checkOnChain(walletOn(chainId), { chainId, contracts }))
        .filter((finding) => !finding.ok)
        .map((finding) => [finding.check, finding.detail]);

    expect(
      await failedChecks(LAYER2, { ...layer2, yieldVaultFactory: settlement.yieldVaultFactory! }),
    ).toEqual([
      [
        'no yield vault factory without an sUSDe to stake in',
        expect.stringContaining('the chain has no sUSDe for its vaults'),
      ],
    ]);
    expect(
      await failedChecks(SETTLEMENT, { ...settlement, yieldVaultFactory: settlement.forwarderFactory! }),
    ).toEqual([
      [
        'yield vault factory deploys vaults over sUSDe',
        `yield vault factory is ${settlement.forwarderFactory}, expected ${yieldVaultFactoryAddress()}`,
      ],
    ]);
    // The factory's vault constructor refuses a staked vault that is no ERC-4626 (here USDC): the simulation reverts.
    const notAVault = await checkOnChain(walletOn(SETTLEMENT), {
      chainId: SETTLEMENT,
      contracts: { ...settlement, susde: settlement.usdc! },
    });
    expect(
      notAVault.find((finding) => finding.check === 'yield vault factory deploys vaults over sUSDe')!.ok,
    ).toBe(false);
  }, 60_000);
});

/**
 * The production script itself (`chain/deployment/main.ts`, run as the operator runs it) against local chains where
 * Ethena-like contracts stand at Ethena's published Ethereum Sepolia addresses: the repo's USDe, and a
 * LocalStakedUSDeV2 (cooldown on, as Ethena's) over it, their code and storage copied to those addresses. The
 * other protocols are the local real-protocol set, named in the operator's external file.
 */
describe('the production deployment script on a chain with Ethena-like contracts at their published addresses', () => {
  const SETTLEMENT = 11155111;
  const LAYER2 = 84532;
  // A deployer of its own: the other block's factory and adapter on these chains stay as they configured them.
  const deployer = ANVIL_DEV_ACCOUNTS[6];
  const published = canonicalAddresses(SETTLEMENT);
  let local: LocalChains;
  let workDir: string;

  beforeAll(async () => {
    local = await startLocalChains({ chainIds: [SETTLEMENT, LAYER2], protocols: 'real' });
    workDir = mkdtempSync(join(tmpdir(), 'deployment-script-'));
  }, 120_000);
  afterAll(async () => {
    await local?.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  const chainOf = (chainId: number) => local.chains.find((chain) => chain.chainId === chainId)!;
  const testClientOf = (chainId: number) =>
    createTestClient({
      mode: 'anvil',
      chain: defineChain({
        id: chainId,
        name: `${chainId}`,
        nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
        rpcUrls: { default: { http: [chainOf(chainId).rpcUrl] } },
      }),
      transport: http(chainOf(chainId).rpcUrl),
      account: privateKeyToAccount(deployer.privateKey),
      pollingInterval: 100,
    })
      .extend(publicActions)
      .extend(walletActions);

  /** Puts `from`'s code and its first storage slots (the plain state variables) at `to`. */
  const copyContract = async (client: ReturnType<typeof testClientOf>, from: Address, to: Address) => {
    await client.setCode({ address: to, bytecode: (await client.getCode({ address: from }))! });
    for (let slot = 0; slot < 16; slot++) {
      const value = await client.getStorageAt({ address: from, slot: `0x${slot.toString(16)}` });
      if (value && BigInt(value) !== 0n)
        await client.setStorageAt({ address: to, index: slot, value: value as Hex });
    }
  };

  const deployed = async (client: ReturnType<typeof testClientOf>, hash: Hex) => {
    const receipt = await client.waitForTransactionReceipt({ hash });
    return receipt.contractAddress!;
  };

  /** Ethena's USDe and sUSDe (cooldown on) at the published addresses, and a USDe OFT adapter over that USDe. */
  const placeEthenaLikeContracts = async (): Promise<Address> => {
    const client = testClientOf(SETTLEMENT);
    const { contracts } = chainOf(SETTLEMENT);
    const usde = published.usde!.address;
    await copyContract(client, contracts.usde!, usde);
    // sUSDe's asset is immutable (in its code): deployed over the published USDe first, then copied.
    const stakedUsde = await deployed(
      client,
      await client.deployContract({
        abi: LocalStakedUSDeV2.abi,
        bytecode: LocalStakedUSDeV2.bytecode,
        args: [usde, deployer.address],
      }),
    );
    await copyContract(client, stakedUsde, published.susde!.address);
    return deployed(
      client,
      await client.deployContract({
        abi: LocalUSDeOFTAdapter.abi,
        bytecode: LocalUSDeOFTAdapter.bytecode,
        args: [usde, contracts.layerZeroEndpoint!, deployer.address],
      }),
    );
  };

  const runScript = async (args: string[]) => {
    const env = {
      ...process.env,
      DEPLOYER_PRIVATE_KEY: deployer.privateKey,
      SETTLEMENT_OPERATOR_ADDRESS: LOCAL_SETTLEMENT_OPERATOR.address,
      PAYMASTER_SIGNER_ADDRESS: LOCAL_RELAYER.address,
      [`RPC_URL_${SETTLEMENT}`]: chainOf(SETTLEMENT).rpcUrl,
      [`RPC_URL_${LAYER2}`]: chainOf(LAYER2).rpcUrl,
    };
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', 'chain/deployment/main.ts', ...args],
        { env, timeout: 120_000 },
      );
      return { code: 0, stdout };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      return { code: failed.code ?? -1, stdout: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
    }
  };

  it('deploys the yield vault factory on the chain with sUSDe only, verifies it over the published sUSDe, and deploy-options offers exactly that chain', async () => {
    const usdeOft = await placeEthenaLikeContracts();
    const protocolsOf = (chainId: number) => {
      const { contracts } = chainOf(chainId);
      return {
        usdc: contracts.usdc!,
        usdt: contracts.usdt!,
        layerZeroEndpoint: contracts.layerZeroEndpoint!,
        uniswapSwapRouter02: contracts.uniswapSwapRouter02!,
        entryPointV07: contracts.entryPointV07!,
        entryPointV08: contracts.entryPointV08!,
        poolFees: { usdc: 500, usdt: 500 },
      };
    };
    // No usde/susde for Ethereum Sepolia: the script takes Ethena's published addresses itself.
    const externalFile = join(workDir, 'external.json');
    writeFileSync(
      externalFile,
      JSON.stringify({
        [SETTLEMENT]: { ...protocolsOf(SETTLEMENT), usdeOft },
        [LAYER2]: {
          ...protocolsOf(LAYER2),
          usde: chainOf(LAYER2).contracts.usde!,
          usdeOft: chainOf(LAYER2).contracts.usdeOft!,
        },
      }),
    );
    const deploymentsFile = join(workDir, 'deployments.json');
    for (const chainId of [SETTLEMENT, LAYER2]) {
      const run = await runScript([
        'deploy',
        '--chain',
        String(chainId),
        '--external',
        externalFile,
        '--deployments',
        deploymentsFile,
      ]);
      expect(run).toMatchObject({
        code: 0,
        stdout: expect.stringContaining(`written to ${deploymentsFile}`),
      });
    }

    const chains = loadDeployments(deploymentsFile);
    const settlement = chains.find((chain) => chain.chainId === SETTLEMENT)!.contracts;
    expect(settlement).toMatchObject({
      usde: published.usde!.address,
      susde: published.susde!.address,
      yieldVaultFactory: yieldVaultFactoryAddress(),
    });
    expect(await testClientOf(SETTLEMENT).getCode({ address: settlement.yieldVaultFactory! })).toMatch(
      /^0x[0-9a-f]{100,}$/,
    );
    expect(chains.find((chain) => chain.chainId === LAYER2)!.contracts.yieldVaultFactory).toBeUndefined();

    // deploy-options reads the same file: Ethereum Sepolia offers USDe over the published sUSDe, Base Sepolia nothing.
    const networks = createNetworkRegistry(
      { DEPLOYMENTS_FILE: deploymentsFile } as unknown as Config,
      chains,
    );
    expect(yieldNetworkOf(networks.byChainId(SETTLEMENT))).toMatchObject({
      vaultFactory: yieldVaultFactoryAddress(),
      permittedTokens: [
        { symbol: 'USDe', address: published.usde!.address, stakedVault: published.susde!.address },
      ],
    });
    expect(yieldNetworkOf(networks.byChainId(LAYER2))).toBeUndefined();

    const verify = await runScript(['verify', '--deployments', deploymentsFile]);
    const lines = verify.stdout.split('\n');
    const line = (chainId: number, check: string) =>
      lines.find((entry) => entry.includes(`[${chainId}] ${check}:`));
    expect(line(SETTLEMENT, 'yield vault factory deploys vaults over sUSDe')).toMatch(
      new RegExp(
        `^ok +\\[${SETTLEMENT}\\] .*factory ${yieldVaultFactoryAddress()} deploys a vault over sUSDe ${published.susde!.address} .*redemption asynchronous ERC-7540 \\(sUSDe cooldown 604800 s\\)$`,
      ),
    );
    expect(line(SETTLEMENT, 'usde is canonical')).toMatch(/^ok /);
    expect(line(SETTLEMENT, 'susde is canonical')).toMatch(/^ok /);
    expect(line(SETTLEMENT, 'sUSDe is an ERC-4626 over USDe with Ethena’s cooldown interface')).toMatch(
      /^ok .*cooldown 604800 s/,
    );
    expect(line(LAYER2, 'no yield vault factory without an sUSDe to stake in')).toMatch(/^ok /);
    // What fails is only what this rehearsal cannot have: LayerZero's and Uniswap's canonical deployments, and
    // pools for the published USDe (the local pools trade the local one).
    const failed = lines.filter((entry) => entry.startsWith('FAIL')).map((entry) => entry.split(':')[0]);
    const notCanonical = (chainId: number) =>
      ['layerZeroEndpoint', 'uniswapSwapRouter02', 'uniswapV3Factory'].map(
        (key) => `FAIL [${chainId}] ${key} is canonical`,
      );
    expect(failed).toEqual([
      ...notCanonical(LAYER2),
      ...notCanonical(SETTLEMENT),
      `FAIL [${SETTLEMENT}] usdc → USDe pool`,
      `FAIL [${SETTLEMENT}] usdt → USDe pool`,
    ]);
    expect(verify.stdout).toMatch(/\n\d+ passed, 8 failed\n$/);
    expect(verify.code).toBe(1);
  }, 300_000);
});
