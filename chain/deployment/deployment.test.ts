import { EndpointId } from '@layerzerolabs/lz-definitions';
import { type Address, createNonceManager, createWalletClient, defineChain, getAddress, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { getTransactionCount } from 'viem/actions';
import { jsonRpc } from 'viem/nonce';
import { ANVIL_DEV_ACCOUNTS } from '../../dev/services/anvil';
import { type LocalChains, startLocalChains } from '../../dev/services/localChains';
import { LOCAL_RELAYER, LOCAL_SETTLEMENT_OPERATOR } from '../../dev/chains/localSettlement';
import { NETWORKS } from '../networks';
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
    expect(() => externalContractsOf(11155111, tokens)).toThrow(
      /external contracts of chain 11155111: usde: .*usdeOft: /,
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
});
