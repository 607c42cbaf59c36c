import type { Address, Hex } from 'viem';
import type { Logger } from '../api/logger';
import { paymasterModeOf } from '../chain/paymasterData';
import type { Db } from '../db/client';
import type { SponsorshipMode } from '../db/schema';
import {
  type PaymasterClient,
  checkChainAllowed,
  checkGasMode,
  checkKeyNetworkClass,
  checkPrepaidBalance,
} from './clientChecks';
import { type CheckOutcome, PAYMASTER_DENIALS, type PaymasterDenial, describeDenial } from './denials';
import { relayToBundler } from './bundlerProxyUpstream';
import { NO_USAGE_FACTS, type UsageFacts, recordPaymasterDenial } from './usageRecords';

/**
 * The bundler proxy (`POST /v1/paymaster/bundler/{chainId}`) after the client id and Origin were
 * accepted and the chain id was read: the client's chain and key-class checks, then the gas mode
 * and prepaid balance of every user operation that uses our paymaster, then the raw JSON-RPC
 * request relayed to the chain's bundler and its answer returned byte for byte.
 *
 * Gas mode comes from the relayed operation itself: an operation whose `paymaster` is one of our
 * paymasters on the chain is `sponsored` when its paymasterData mode byte is 0 and `user_paid`
 * when it is 1 (ERC-20). Operations without our paymaster (self-paid, or another paymaster) are
 * relayed without a gas-mode or balance check: the merchant sponsors nothing there.
 */

/** Bundler methods that carry a user operation as params[0]. */
const USER_OPERATION_METHODS = new Set(['eth_sendUserOperation', 'eth_estimateUserOperationGas']);

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
  /** A client-policy or input refusal, or an upstream failure: HTTP `status` with `{ error: { message, type: 'error' } }`. */
  | { kind: 'refused'; status: number; message: string };

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
    if (!outcome.ok) return refuse(deps, client, chainFacts, outcome.denial);
  }

  let request: unknown;
  try {
    request = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return {
      kind: 'refused',
      status: 400,
      message: 'the body must be a JSON-RPC request (or batch) in JSON',
    };
  }

  const paymasters = new Set(deps.paymastersOn(chainId).map((address) => address.toLowerCase()));
  for (const operation of inspectOperations(request, paymasters)) {
    if (operation.mode === null) continue;
    const facts: UsageFacts = {
      ...chainFacts,
      method: operation.method,
      mode: operation.mode,
      sender: operation.sender,
      entryPoint: operation.entryPoint,
    };
    const gasMode = checkGasMode(client, operation.mode);
    if (!gasMode.ok) return refuse(deps, client, facts, gasMode.denial);
    const balance: CheckOutcome = await checkPrepaidBalance(deps.db, {
      merchantId: client.merchantId,
      chainId,
      mode: operation.mode,
    });
    if (!balance.ok) return refuse(deps, client, facts, balance.denial);
  }

  const upstreamUrl = deps.bundlerUrlFor(chainId);
  if (!upstreamUrl)
    return {
      kind: 'refused',
      status: 502,
      message: `bundler upstream: no bundler is configured for chain ${chainId}`,
    };
  const relayed = await relayToBundler(upstreamUrl, rawBody, { timeoutMs: deps.timeoutMs });
  if (!relayed.ok) {
    deps.logger.warn(
      { chainId, clientId: client.clientId, problem: relayed.message },
      'bundler upstream failed',
    );
    return { kind: 'refused', status: 502, message: relayed.message };
  }
  return { kind: 'relayed', body: relayed.body };
}

async function refuse(
  deps: BundlerProxyDependencies,
  client: PaymasterClient,
  facts: UsageFacts,
  denial: PaymasterDenial,
): Promise<BundlerProxyOutcome> {
  const kind = PAYMASTER_DENIALS[denial.code];
  if (kind.usageStatus)
    await recordPaymasterDenial(deps, client, facts, kind.usageStatus, denial.reason ?? denial.code);
  return { kind: 'refused', status: kind.httpStatus ?? 403, message: describeDenial(denial) };
}

/** Every user operation in a JSON-RPC request or batch, with the sponsorship mode it asks of our paymaster. */
function inspectOperations(request: unknown, ourPaymasters: Set<string>): InspectedOperation[] {
  const calls = Array.isArray(request) ? request : [request];
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
