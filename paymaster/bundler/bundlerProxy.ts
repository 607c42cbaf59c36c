import type { Address, Hex } from 'viem';
import type { Logger } from '../../logging/logger';
import { paymasterModeOf } from '../../chain/paymasterData';
import type { Db } from '../../db/client';
import type { SponsorshipMode } from '../../db/schema';
import {
  type PaymasterClient,
  checkChainAllowed,
  checkGasMode,
  checkKeyNetworkClass,
  checkPrepaidBalance,
} from '../policy/clientChecks';
import { type CheckOutcome, PAYMASTER_DENIALS, type PaymasterDenial, describeDenial } from '../rpc/denials';
import { relayToBundler } from './bundlerProxyUpstream';
import { RELAYED_BUNDLER_METHODS, USER_OPERATION_METHODS } from './bundlerMethods';
import { NO_USAGE_FACTS, type UsageFacts, recordPaymasterDenial } from '../rpc/usageRecords';

/**
 * The bundler proxy (`POST /v1/paymaster/bundler/{chainId}`) after the client id and Origin were
 * accepted and the chain id was read: the client's chain and key-class checks, the batch size, the
 * method allowlist (docs/paymaster.md "The bundler proxy (`POST /v1/paymaster/bundler/{chainId}`)"), then the gas mode of every user operation that uses our paymaster
 * and the prepaid balance (once per request), then the raw JSON-RPC request relayed to the chain's
 * bundler and its answer returned byte for byte.
 *
 * Gas mode comes from the relayed operation itself: an operation whose `paymaster` is one of our
 * paymasters on the chain is `sponsored` when its paymasterData mode byte is 0 and `user_paid`
 * when it is 1 (ERC-20). Operations without our paymaster (self-paid, or another paymaster) are
 * relayed without a gas-mode or balance check: the merchant sponsors nothing there.
 */

/** Most requests one JSON-RPC batch may hold. */
export const MAX_BUNDLER_BATCH = 20;

export interface BundlerProxyDependencies {
  db: Db;
  logger: Logger;
  /** BUNDLER_URL_<chainId>, or undefined when the chain has no bundler configured. */
  bundlerUrlFor(chainId: number): string | undefined;
  /** Our paymaster contracts on the chain (every EntryPoint release). */
  paymastersOn(chainId: number): Address[];
  timeoutMs?: number;
}

export interface BundlerProxyRequest {
  client: PaymasterClient;
  chainId: number;
  /** The request body exactly as received. */
  rawBody: Buffer;
}

export type BundlerProxyOutcome =
  /** HTTP 200 with the bundler's body, byte for byte. */
  | { kind: 'relayed'; body: Buffer }
  /** HTTP 200 with our own JSON-RPC answer (a method the proxy does not relay); nothing reached the provider. */
  | { kind: 'answered'; body: unknown }
  /** A client-policy or input denial, or an upstream failure: HTTP `status` with `{ error: { message, type: 'error' } }`. */
  | { kind: 'denied'; status: number; message: string };

/** An operation the proxy found in the request, as the policy sees it. */
interface InspectedOperation {
  method: string;
  sender: string | null;
  entryPoint: string | null;
  /** Null when the operation does not use our paymaster (or its data has no readable mode). */
  mode: SponsorshipMode | null;
}

export async function proxyBundlerRequest(
  deps: BundlerProxyDependencies,
  { client, chainId, rawBody }: BundlerProxyRequest,
): Promise<BundlerProxyOutcome> {
  const chainFacts: UsageFacts = { ...NO_USAGE_FACTS, chainId };
  for (const outcome of [checkChainAllowed(client, chainId), checkKeyNetworkClass(client, chainId)]) {
    if (!outcome.ok) return deny(deps, client, chainFacts, outcome.denial);
  }

  let request: unknown;
  try {
    request = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return {
      kind: 'denied',
      status: 400,
      message: 'the body must be a JSON-RPC request (or batch) in JSON',
    };
  }

  const calls = Array.isArray(request) ? request : [request];
  if (Array.isArray(request) && calls.length === 0)
    return { kind: 'denied', status: 400, message: 'the batch is empty' };
  if (calls.length > MAX_BUNDLER_BATCH) {
    return {
      kind: 'denied',
      status: 400,
      message: `the batch holds ${calls.length} requests; the bundler proxy relays at most ${MAX_BUNDLER_BATCH}`,
    };
  }
  const notRelayed = answerUnrelayedMethods(calls);
  if (notRelayed) {
    await recordPaymasterDenial(
      deps,
      client,
      { ...chainFacts, method: notRelayed.method },
      'denied_malformed',
      'method_not_relayed',
    );
    return { kind: 'answered', body: Array.isArray(request) ? notRelayed.answers : notRelayed.answers[0] };
  }

  const paymasters = new Set(deps.paymastersOn(chainId).map((address) => address.toLowerCase()));
  // The prepaid balance is read once per request, for the first sponsored operation that needs it.
  let balance: Promise<CheckOutcome> | undefined;
  for (const operation of inspectOperations(calls, paymasters)) {
    if (operation.mode === null) continue;
    const facts: UsageFacts = {
      ...chainFacts,
      method: operation.method,
      mode: operation.mode,
      sender: operation.sender,
      entryPoint: operation.entryPoint,
    };
    const gasMode = checkGasMode(client, operation.mode);
    if (!gasMode.ok) return deny(deps, client, facts, gasMode.denial);
    if (operation.mode !== 'sponsored') continue;
    balance ??= checkPrepaidBalance(deps.db, { merchantId: client.merchantId, chainId, mode: 'sponsored' });
    const outcome = await balance;
    if (!outcome.ok) return deny(deps, client, facts, outcome.denial);
  }

  const upstreamUrl = deps.bundlerUrlFor(chainId);
  if (!upstreamUrl)
    return {
      kind: 'denied',
      status: 502,
      message: `bundler upstream: no bundler is configured for chain ${chainId}`,
    };
  const relayed = await relayToBundler(upstreamUrl, rawBody, { timeoutMs: deps.timeoutMs });
  if (!relayed.ok) {
    deps.logger.warn(
      { chainId, clientId: client.clientId, problem: relayed.message },
      'bundler upstream failed',
    );
    return { kind: 'denied', status: 502, message: relayed.message };
  }
  return { kind: 'relayed', body: relayed.body };
}

async function deny(
  deps: BundlerProxyDependencies,
  client: PaymasterClient,
  facts: UsageFacts,
  denial: PaymasterDenial,
): Promise<BundlerProxyOutcome> {
  const kind = PAYMASTER_DENIALS[denial.code];
  if (kind.usageStatus)
    await recordPaymasterDenial(deps, client, facts, kind.usageStatus, denial.reason ?? denial.code);
  return { kind: 'denied', status: kind.httpStatus ?? 403, message: describeDenial(denial) };
}

/**
 * JSON-RPC answers for a request (or batch) holding a method the proxy does not relay, or undefined when
 * every call may be relayed: -32601 for such a method, -32600 for a call that is not a JSON-RPC request,
 * and in a batch -32600 for the relayable rest (a batch is relayed whole or not at all).
 */
function answerUnrelayedMethods(calls: unknown[]):
  | {
      method: string | null;
      answers: { jsonrpc: '2.0'; id: unknown; error: { code: number; message: string } }[];
    }
  | undefined {
  const denialOf = (call: unknown): { code: number; message: string } | undefined => {
    if (!isObject(call) || typeof call.method !== 'string')
      return { code: -32600, message: 'Invalid Request' };
    if (!RELAYED_BUNDLER_METHODS.has(call.method))
      return {
        code: -32601,
        message: `Method not found: the bundler proxy does not relay ${call.method.slice(0, 64)}`,
      };
    return undefined;
  };
  const denied = calls.map(denialOf);
  const first = denied.findIndex((error) => error !== undefined);
  if (first === -1) return undefined;
  const idOf = (call: unknown) => (isObject(call) && 'id' in call ? call.id : null);
  const offending = calls[first];
  return {
    method:
      isObject(offending) && typeof offending.method === 'string' ? offending.method.slice(0, 64) : null,
    answers: calls.map((call, index) => ({
      jsonrpc: '2.0' as const,
      id: idOf(call),
      error: denied[index] ?? {
        code: -32600,
        message: 'Invalid Request: not relayed, the batch holds a method the proxy does not relay',
      },
    })),
  };
}

/** Every user operation in the JSON-RPC calls, with the sponsorship mode it asks of our paymaster. */
function inspectOperations(calls: unknown[], ourPaymasters: Set<string>): InspectedOperation[] {
  return calls.flatMap((call): InspectedOperation[] => {
    if (!isObject(call) || typeof call.method !== 'string' || !USER_OPERATION_METHODS.has(call.method))
      return [];
    const params = Array.isArray(call.params) ? call.params : [];
    const [userOp, entryPoint] = params;
    if (!isObject(userOp)) return [];
    return [
      {
        method: call.method,
        sender: typeof userOp.sender === 'string' ? userOp.sender.toLowerCase() : null,
        entryPoint: typeof entryPoint === 'string' ? entryPoint.toLowerCase() : null,
        mode: sponsorshipModeOf(userOp, ourPaymasters),
      },
    ];
  });
}

function sponsorshipModeOf(
  userOp: Record<string, unknown>,
  ourPaymasters: Set<string>,
): SponsorshipMode | null {
  const { paymaster, paymasterData } = userOp;
  if (typeof paymaster !== 'string' || !ourPaymasters.has(paymaster.toLowerCase())) return null;
  const mode =
    typeof paymasterData === 'string' ? paymasterModeOf(asEvenLengthHex(paymasterData)) : undefined;
  if (mode === 'sponsored') return 'sponsored';
  if (mode === 'erc20') return 'user_paid';
  // Our paymaster with unreadable data: its validation reverts on-chain, nothing can be sponsored.
  return null;
}

/** Odd-length hex is read as if left-padded with a zero, so a sloppy encoding cannot hide the mode byte from the proxy. */
function asEvenLengthHex(value: string): Hex {
  return (/^0x[0-9a-fA-F]*$/.test(value) && value.length % 2 === 1 ? `0x0${value.slice(2)}` : value) as Hex;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
