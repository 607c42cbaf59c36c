import {
  type Address,
  type Hex,
  concat,
  encodeAbiParameters,
  keccak256,
  numberToHex,
  pad,
  parseAbi,
} from 'viem';

/**
 * LayerZero V2 as settlement meets it: the endpoint and OApp calls the worker reads or makes, the GUID of a
 * packet, and the compose message the USDe OFT queues for our composer. The shapes follow the protocol's
 * published sources (npm `@layerzerolabs/lz-evm-protocol-v2`, `@layerzerolabs/oft-evm`).
 */

/** What the worker reads from, and may call on, an EndpointV2 and an OApp. */
export const layerZeroEndpointAbi = parseAbi([
  'function eid() view returns (uint32)',
  'function composeQueue(address from, address to, bytes32 guid, uint16 index) view returns (bytes32 messageHash)',
  'function lzCompose(address from, address to, bytes32 guid, uint16 index, bytes message, bytes extraData) payable',
  'function inboundPayloadHash(address receiver, uint32 srcEid, bytes32 sender, uint64 nonce) view returns (bytes32)',
  'function lazyInboundNonce(address receiver, uint32 srcEid, bytes32 sender) view returns (uint64)',
  'function lzReceive((uint32 srcEid, bytes32 sender, uint64 nonce) origin, address receiver, bytes32 guid, bytes message, bytes extraData) payable',
  'function lzComposeAlert(address from, address to, bytes32 guid, uint16 index, uint256 gas, uint256 value, bytes message, bytes extraData, bytes reason)',
  'event PacketSent(bytes encodedPayload, bytes options, address sendLibrary)',
  'event PacketVerified((uint32 srcEid, bytes32 sender, uint64 nonce) origin, address receiver, bytes32 payloadHash)',
  'event ComposeSent(address from, address to, bytes32 guid, uint16 index, bytes message)',
  'event ComposeDelivered(address from, address to, bytes32 guid, uint16 index)',
]);

export const oappAbi = parseAbi([
  'function endpoint() view returns (address)',
  'function peers(uint32 eid) view returns (bytes32)',
  'function token() view returns (address)',
  'function setPeer(uint32 eid, bytes32 peer)',
]);

/** `composeQueue` holds this once a compose has run (EndpointV2's RECEIVED_MESSAGE_HASH). */
export const COMPOSE_RECEIVED: Hex = pad('0x01', { size: 32 });
export const COMPOSE_EMPTY: Hex = pad('0x00', { size: 32 });

/** Left-pads an address to the bytes32 LayerZero names OApps by. */
export function addressToBytes32(address: Address): Hex {
  return pad(address, { size: 32 });
}

export interface PacketPath {
  nonce: bigint;
  srcEid: number;
  sender: Address;
  dstEid: number;
  receiver: Hex;
}

/** The GUID LayerZero gives a packet: keccak256(nonce ‖ srcEid ‖ sender ‖ dstEid ‖ receiver), packed (GUID.sol). */
export function packetGuid({ nonce, srcEid, sender, dstEid, receiver }: PacketPath): Hex {
  return keccak256(
    concat([
      numberToHex(nonce, { size: 8 }),
      numberToHex(srcEid, { size: 4 }),
      addressToBytes32(sender),
      numberToHex(dstEid, { size: 4 }),
      pad(receiver, { size: 32 }),
    ]),
  );
}

/**
 * The compose message an OFT queues after crediting `amountLD` (OFTComposeMsgCodec.encode): nonce (8) ‖ srcEid
 * (4) ‖ amountLD (32) ‖ composeFrom (32, the sender on the source chain) ‖ the app's compose message.
 */
export function oftComposeMessage({
  nonce,
  srcEid,
  amountLD,
  composeFrom,
  composeMsg,
}: {
  nonce: bigint;
  srcEid: number;
  amountLD: bigint;
  composeFrom: Address;
  composeMsg: Hex;
}): Hex {
  return concat([
    numberToHex(nonce, { size: 8 }),
    numberToHex(srcEid, { size: 4 }),
    numberToHex(amountLD, { size: 32 }),
    addressToBytes32(composeFrom),
    composeMsg,
  ]);
}

/** Our part of the compose message, as a Forwarder builds it: abi.encode(merchant, sessionId). */
export function settlementComposeMsg({ merchant, sessionId }: { merchant: Address; sessionId: Hex }): Hex {
  return encodeAbiParameters([{ type: 'address' }, { type: 'bytes16' }], [merchant, sessionId]);
}
