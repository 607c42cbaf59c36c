import { createSocket, type RemoteInfo } from 'node:dgram';
import type { AddressInfo } from 'node:net';

/**
 * A small authoritative DNS server over UDP for the dev stack and the tests (docs/yield.md "Local development" `dns`): it
 * answers TXT questions from `records` (any other type gets an empty answer) and NXDOMAIN for names it
 * has nothing for, in the RFC 1035 wire format, so custom-domain verification runs against a real
 * resolver (node:dns pointed at it through YIELD_DNS_SERVER). Nothing is cached: TTL 0.
 */

/** TXT values of a name (lower-case, no trailing dot); none when undefined or empty. */
export type TxtRecordSource = (name: string) => string[] | undefined;

export interface DnsServer {
  host: string;
  port: number;
  /** `host:port`, the form YIELD_DNS_SERVER takes. */
  address: string;
  stop(): Promise<void>;
}

const TYPE_TXT = 16;
const CLASS_IN = 1;
const RCODE_FORMERR = 1;
const RCODE_NXDOMAIN = 3;
const RCODE_NOTIMP = 4;

export async function startDnsServer({
  records,
  host = '127.0.0.1',
  port = 0,
}: {
  records: TxtRecordSource;
  host?: string;
  port?: number;
}): Promise<DnsServer> {
  const socket = createSocket('udp4');
  socket.on('message', (message: Buffer, remote: RemoteInfo) => {
    const reply = answer(message, records);
    if (reply) socket.send(reply, remote.port, remote.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, host, () => {
      socket.off('error', reject);
      resolve();
    });
  });
  const bound = socket.address() as AddressInfo;
  return {
    host,
    port: bound.port,
    address: `${host}:${bound.port}`,
    stop: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

interface Question {
  id: number;
  recursionDesired: boolean;
  name: string;
  type: number;
  qclass: number;
  /** The question section as received, echoed in the answer. */
  section: Buffer;
}

/** The response to one query packet, or undefined for a packet too short to have an id. */
export function answer(packet: Buffer, records: TxtRecordSource): Buffer | undefined {
  if (packet.length < 12) return undefined;
  const question = parseQuestion(packet);
  if (!question) return header(packet.readUInt16BE(0), false, RCODE_FORMERR, 0, 0);
  if (question.qclass !== CLASS_IN || (packet.readUInt16BE(2) & 0x7800) !== 0) {
    return Buffer.concat([
      header(question.id, question.recursionDesired, RCODE_NOTIMP, 1, 0),
      question.section,
    ]);
  }
  const values = records(question.name) ?? [];
  if (values.length === 0) {
    return Buffer.concat([
      header(question.id, question.recursionDesired, RCODE_NXDOMAIN, 1, 0),
      question.section,
    ]);
  }
  const answers = question.type === TYPE_TXT ? values.map(txtAnswer) : [];
  return Buffer.concat([
    header(question.id, question.recursionDesired, 0, 1, answers.length),
    question.section,
    ...answers,
  ]);
}

function header(
  id: number,
  recursionDesired: boolean,
  rcode: number,
  questions: number,
  answers: number,
): Buffer {
  const buffer = Buffer.alloc(12);
  buffer.writeUInt16BE(id, 0);
  // QR (response) and AA (authoritative); RD echoed; RA off: we do not recurse.
  buffer.writeUInt16BE(0x8000 | 0x0400 | (recursionDesired ? 0x0100 : 0) | rcode, 2);
  buffer.writeUInt16BE(questions, 4);
  buffer.writeUInt16BE(answers, 6);
  return buffer;
}

function parseQuestion(packet: Buffer): Question | undefined {
  if (packet.readUInt16BE(4) !== 1) return undefined;
  const labels: string[] = [];
  let offset = 12;
  for (;;) {
    if (offset >= packet.length) return undefined;
    const length = packet[offset]!;
    offset += 1;
    if (length === 0) break;
    // Compression pointers never appear in a question we are sent first.
    if (length > 63 || offset + length > packet.length) return undefined;
    labels.push(packet.subarray(offset, offset + length).toString('latin1'));
    offset += length;
  }
  if (offset + 4 > packet.length) return undefined;
  return {
    id: packet.readUInt16BE(0),
    recursionDesired: (packet.readUInt16BE(2) & 0x0100) !== 0,
    name: labels.join('.').toLowerCase(),
    type: packet.readUInt16BE(offset),
    qclass: packet.readUInt16BE(offset + 2),
    section: packet.subarray(12, offset + 4),
  };
}

/** One TXT resource record for the question's name (pointer to offset 12), its value in 255-byte strings. */
function txtAnswer(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  const strings: Buffer[] = [];
  for (let start = 0; start < bytes.length || strings.length === 0; start += 255) {
    const chunk = bytes.subarray(start, start + 255);
    strings.push(Buffer.concat([Buffer.from([chunk.length]), chunk]));
  }
  const rdata = Buffer.concat(strings);
  const fixed = Buffer.alloc(12);
  fixed.writeUInt16BE(0xc00c, 0);
  fixed.writeUInt16BE(TYPE_TXT, 2);
  fixed.writeUInt16BE(CLASS_IN, 4);
  fixed.writeUInt32BE(0, 6);
  fixed.writeUInt16BE(rdata.length, 10);
  return Buffer.concat([fixed, rdata]);
}
