import { type Address, getAddress, parseAbi, zeroAddress } from 'viem';
import { readContract } from 'viem/actions';
import { deployDeterministic, deterministicDeploymentAddress } from '../../chain/deterministicDeployer';
import { type DeployerClient, deployPlain, initCodeOf, realSaltOf, sendCall } from './contractCalls';
import { NPM_ARTIFACTS } from './npmArtifacts';

/**
 * LayerZero V2 on a local chain, from the protocol's npm bytecode: the real EndpointV2 under the network's own
 * endpoint id, and SimpleMessageLib as its send and receive library. SimpleMessageLib is the protocol's test
 * library: a packet is verified on the destination by calling `validatePacket` with the bytes the source
 * endpoint emitted in `PacketSent` (the dev relayer does, as DVNs would), then executed through the endpoint's
 * permissionless `lzReceive` and `lzCompose` (as an executor would).
 */

/** The native fee the local message library charges per packet (wei): small, but visible in balances. */
export const LOCAL_LAYER_ZERO_FEE = 10n ** 14n;

const endpointAdminAbi = parseAbi([
  'function registerLibrary(address lib)',
  'function isRegisteredLibrary(address lib) view returns (bool)',
  'function setDefaultSendLibrary(uint32 eid, address lib)',
  'function defaultSendLibrary(uint32 eid) view returns (address)',
  'function setDefaultReceiveLibrary(uint32 eid, address lib, uint256 gracePeriod)',
  'function defaultReceiveLibrary(uint32 eid) view returns (address)',
]);

export const simpleMessageLibAbi = parseAbi([
  'function validatePacket(bytes packetBytes)',
  'function setWhitelistCaller(address caller)',
  'function whitelistCaller() view returns (address)',
  'function setMessagingFee(uint256 nativeFee, uint256 lzTokenFee)',
  'function nativeFee() view returns (uint256)',
]);

function endpointInitCode({ eid, owner }: { eid: number; owner: Address }) {
  return initCodeOf(NPM_ARTIFACTS.endpointV2.bytecode, ['uint32', 'address'], [eid, owner]);
}

/** Where the local EndpointV2 of `eid` owned by `owner` lives (it differs per chain: the eid is a constructor argument). */
export function localEndpointAddress(identity: { eid: number; owner: Address }): Address {
  return deterministicDeploymentAddress({
    initCode: endpointInitCode(identity),
    salt: realSaltOf('endpointV2'),
  });
}

export async function deployLocalEndpoint(
  client: DeployerClient,
  identity: { eid: number; owner: Address },
): Promise<Address> {
  return deployDeterministic(client, {
    initCode: endpointInitCode(identity),
    salt: realSaltOf('endpointV2'),
  });
}

/**
 * Gives `endpoint` a SimpleMessageLib (deployed with a plain CREATE so the deployer owns it and can set who
 * may verify packets and the fee) as default send and receive library towards every `remoteEids`. A lib
 * already installed is found through the endpoint and reused. Returns the library.
 */
export async function wireLocalMessageLib(
  client: DeployerClient,
  { endpoint, remoteEids, verifier }: { endpoint: Address; remoteEids: number[]; verifier: Address },
): Promise<Address> {
  const installed = await Promise.all(
    remoteEids.map((eid) =>
      readContract(client, {
        address: endpoint,
        abi: endpointAdminAbi,
        functionName: 'defaultSendLibrary',
        args: [eid],
      }),
    ),
  );
  let lib = installed.find((address) => address !== zeroAddress);
  if (!lib) {
    lib = await deployPlain(client, {
      abi: NPM_ARTIFACTS.simpleMessageLib.abi,
      bytecode: NPM_ARTIFACTS.simpleMessageLib.bytecode,
      args: [endpoint, client.account.address],
    });
  }
  const library = getAddress(lib);
  if (
    !(await readContract(client, {
      address: endpoint,
      abi: endpointAdminAbi,
      functionName: 'isRegisteredLibrary',
      args: [library],
    }))
  )
    await sendCall(client, {
      address: endpoint,
      abi: endpointAdminAbi,
      functionName: 'registerLibrary',
      args: [library],
    });
  for (const eid of remoteEids) {
    const [send, receive] = await Promise.all([
      readContract(client, {
        address: endpoint,
        abi: endpointAdminAbi,
        functionName: 'defaultSendLibrary',
        args: [eid],
      }),
      readContract(client, {
        address: endpoint,
        abi: endpointAdminAbi,
        functionName: 'defaultReceiveLibrary',
        args: [eid],
      }),
    ]);
    if (getAddress(send) !== library)
      await sendCall(client, {
        address: endpoint,
        abi: endpointAdminAbi,
        functionName: 'setDefaultSendLibrary',
        args: [eid, library],
      });
    if (getAddress(receive) !== library)
      await sendCall(client, {
        address: endpoint,
        abi: endpointAdminAbi,
        functionName: 'setDefaultReceiveLibrary',
        args: [eid, library, 0n],
      });
  }
  const [whitelisted, fee] = await Promise.all([
    readContract(client, { address: library, abi: simpleMessageLibAbi, functionName: 'whitelistCaller' }),
    readContract(client, { address: library, abi: simpleMessageLibAbi, functionName: 'nativeFee' }),
  ]);
  if (getAddress(whitelisted) !== getAddress(verifier))
    await sendCall(client, {
      address: library,
      abi: simpleMessageLibAbi,
      functionName: 'setWhitelistCaller',
      args: [verifier],
    });
  if (fee !== LOCAL_LAYER_ZERO_FEE)
    await sendCall(client, {
      address: library,
      abi: simpleMessageLibAbi,
      functionName: 'setMessagingFee',
      args: [LOCAL_LAYER_ZERO_FEE, 0n],
    });
  return library;
}
