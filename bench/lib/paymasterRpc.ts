import { randomBytes } from 'node:crypto';
import { type LoadFigures, latencyPercentiles, runAutocannon } from './load';
import {
  type Address,
  type Hex,
  encodeFunctionData,
  getAddress,
  numberToHex,
  parseAbi,
  recoverMessageAddress,
} from 'viem';
import { LOCAL_PAYMASTER_SIGNER } from '../../dev/chains/deployLocalChain';
import { ENTRY_POINT_V08_ADDRESS } from '../../chain/entryPoints';
import { decodePaymasterData, sponsorshipHash, type SponsorshipTerms } from '../../chain/paymasterData';
import type { Db } from '../../db/client';
import { upsertMerchantByWallet } from '../../db/merchants';
import { insertPaymasterClient } from '../../db/paymasterClients';
import { saveMerchantLimits } from '../../db/paymasterLimits';
import { upsertAllowlistEntry } from '../../db/paymasterPolicies';
import { generateClientId } from '../../paymaster/policy/clientIds';

/**
 * The paymaster benchmarks' shared workload: one sponsored operation (an `execute` call to the
 * merchant's allowlisted contract) sent over and over with a fresh nonce each time, so every
 * signature is over a distinct operation, as wallets send them; and the load protocol that counts
 * JSON-RPC errors, which answer HTTP 200 and would otherwise pass for cheap successes.
 */

export const CHAIN_ID = 84532;
/** The merchant's allowlisted contract, the single call target of every benchmarked operation. */
export const TARGET: Address = '0x1000000000000000000000000000000000000b01';
export const SENDER: Address = '0x4000000000000000000000000000000000000b02';
/**
 * The merchant's per-transaction cap in the seeded limits: far above what one benchmarked operation
 * is priced at (a few dollars), so it is evaluated on every signed request and refuses none.
 */
/**
 * One sender sends every request: limits stay active but generous enough never to refuse (the
 * benchmark chain is a testnet: its budget and the merchant's share of it too; holds count until
 * validUntil, so a run holds every operation it signed). The client's request rate limit is not what
 * these benches measure.
 */
export const GENEROUS_PAYMASTER_LIMITS = {
  PAYMASTER_PLATFORM_PER_SENDER_HOURLY_OPS: '1000000',
  PAYMASTER_PLATFORM_PER_SENDER_DAILY_USD: '100000000',
  PAYMASTER_PLATFORM_DAILY_BUDGET_USD: '100000000',
  PAYMASTER_PLATFORM_TESTNET_DAILY_BUDGET_USD: '100000000',
  PAYMASTER_PLATFORM_PER_MERCHANT_DAILY_USD: '100000000',
  PAYMASTER_MERCHANT_BUDGET_SHARE_BPS: '10000',
  PAYMASTER_RPC_PER_CLIENT_PER_MINUTE: '10000000',
};

export const MERCHANT_PER_TX_CAP_USD = '1000';

const callData: Hex = encodeFunctionData({
  abi: parseAbi(['function execute(address dest, uint256 value, bytes func)']),
  functionName: 'execute',
  args: [TARGET, 0n, '0xd09de08a'],
});
const userOpFields = {
  sender: SENDER,
  callData,
  callGasLimit: '0x30000',
  verificationGasLimit: '0x30000',
  preVerificationGas: '0x10000',
  maxFeePerGas: '0x77359400',
  maxPriorityFeePerGas: '0x3b9aca00',
  signature: '0x',
} as const;

/** Unique across every request of the process (warm-ups and verification included). */
let nextNonce = 1n;

/**
 * JSON-RPC bodies for `method` over the benchmark operation (or the same sender's operation with
 * `operationCallData`, e.g. a delegated transfer), each with the next nonce.
 */
export function rpcBodies(method: string, operationCallData: Hex = callData): () => string {
  const placeholder = '"__NONCE__"';
  const template = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method,
    params: [
      { ...userOpFields, callData: operationCallData, nonce: '__NONCE__' },
      ENTRY_POINT_V08_ADDRESS,
      numberToHex(CHAIN_ID),
    ],
  });
  const [prefix, suffix] = template.split(placeholder) as [string, string];
  return () => `${prefix}"${numberToHex(nextNonce++)}"${suffix}`;
}

export interface PaymasterResult {
  paymaster: Address;
  paymasterData: Hex;
  paymasterVerificationGasLimit: Hex;
  paymasterPostOpGasLimit: Hex;
}

/** The paymaster result in a JSON-RPC answer, or undefined for an error or anything else. */
export function paymasterResultOf(text: string): PaymasterResult | undefined {
  try {
    const result = (JSON.parse(text) as { result?: Partial<PaymasterResult> }).result;
    return typeof result?.paymasterData === 'string' && result.paymasterData.startsWith('0x')
      ? (result as PaymasterResult)
      : undefined;
  } catch {
    return undefined;
  }
}

export interface RpcLoadFigures extends LoadFigures {
  timeouts: number;
  /** HTTP 200 answers without a paymaster result (JSON-RPC errors), warm-up included. */
  jsonRpcErrors: number;
  firstJsonRpcError?: string;
  /** Answers carrying paymaster data, warm-up included (the usage-row cross-checks count these). */
  resultsIncludingWarmUp: number;
}

/**
 * measureLoad's protocol (1 s warm-up, then `durationSec` at `connections`) for POSTs whose bodies
 * vary per request, counting every HTTP 200 that carries a JSON-RPC error instead of paymaster data.
 * The warm-up's JSON-RPC errors count too: a refusal anywhere means the run did not measure the path.
 */
export async function measureRpcLoad({
  url,
  path,
  headers,
  nextBody,
  connections,
  durationSec,
}: {
  url: string;
  path: string;
  headers: Record<string, string>;
  nextBody: () => string;
  connections: number;
  durationSec: number;
}): Promise<RpcLoadFigures> {
  let jsonRpcErrors = 0;
  let results = 0;
  let firstJsonRpcError: string | undefined;
  const run = (duration: number) =>
    runAutocannon({
      url,
      connections,
      duration,
      requests: [
        {
          method: 'POST',
          path,
          headers: { 'content-type': 'application/json', ...headers },
          setupRequest: (request) => ({ ...request, body: nextBody() }),
          onResponse: (status, body) => {
            if (status !== 200) return;
            if (paymasterResultOf(body)) {
              results += 1;
            } else {
              jsonRpcErrors += 1;
              firstJsonRpcError ??= body.slice(0, 300);
            }
          },
        },
      ],
    });
  const { result: warmUp } = await run(1);
  const { result, latenciesMs } = await run(durationSec);
  return {
    requestsPerSec: result.requests.average,
    // To the microsecond, from every 2xx answer (autocannon's own histogram keeps whole milliseconds).
    ...latencyPercentiles(latenciesMs),
    requests: result.requests.total,
    non2xx: warmUp.non2xx + result.non2xx,
    errors: warmUp.errors + result.errors,
    timeouts: warmUp.timeouts + result.timeouts,
    jsonRpcErrors,
    ...(firstJsonRpcError !== undefined && { firstJsonRpcError }),
    resultsIncludingWarmUp: results,
  };
}

/** One request before the load: it must answer paymaster data signed by the paymasters' verifying signer. */
export async function expectSignedResult(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<PaymasterResult> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await response.text();
  const result = paymasterResultOf(text);
  if (response.status !== 200 || !result)
    throw new Error(`${url} answered ${response.status} without paymaster data: ${text}`);
  const decoded = decodePaymasterData(result.paymasterData);
  if (!decoded || decoded.mode !== 'sponsored')
    throw new Error(`${url} answered undecodable paymaster data: ${text}`);
  const { signature, ...terms } = decoded;
  const { params } = JSON.parse(body) as { params: [{ nonce: Hex; callData: Hex }] };
  const hash = sponsorshipHash({
    chainId: CHAIN_ID,
    paymaster: result.paymaster,
    terms: terms as SponsorshipTerms,
    userOperation: {
      sender: SENDER,
      nonce: BigInt(params[0].nonce),
      callData: params[0].callData,
      callGasLimit: BigInt(userOpFields.callGasLimit),
      verificationGasLimit: BigInt(userOpFields.verificationGasLimit),
      preVerificationGas: BigInt(userOpFields.preVerificationGas),
      maxFeePerGas: BigInt(userOpFields.maxFeePerGas),
      maxPriorityFeePerGas: BigInt(userOpFields.maxPriorityFeePerGas),
      paymasterVerificationGasLimit: BigInt(result.paymasterVerificationGasLimit),
      paymasterPostOpGasLimit: BigInt(result.paymasterPostOpGasLimit),
    },
  });
  const signer = await recoverMessageAddress({ message: { raw: hash }, signature });
  if (signer !== LOCAL_PAYMASTER_SIGNER.address)
    throw new Error(
      `${url}: paymaster data signed by ${signer}, not the verifying signer ${LOCAL_PAYMASTER_SIGNER.address}`,
    );
  return result;
}

/** A sponsored `pmc_test_` client of the merchant, allowed on the benchmark chain. */
export async function insertSponsoredClient(db: Db, merchantId: string, label: string): Promise<string> {
  const client = await insertPaymasterClient(db, {
    merchantId,
    clientId: generateClientId('test'),
    environment: 'test',
    label,
    allowedOrigins: [],
    allowedChainIds: [CHAIN_ID],
    gasMode: 'sponsored',
  });
  return client.client_id;
}

/**
 * A merchant with a sponsored client for the chain, the target on its allowlist, and its own
 * per-transaction cap (MERCHANT_PER_TX_CAP_USD), so the merchant's limits are read and the cap is
 * checked on every signed request. Its per-sender values stay unset: the platform's apply.
 */
export async function seedSponsoringMerchant(db: Db): Promise<{ merchantId: string; clientId: string }> {
  const wallet = getAddress(`0x${randomBytes(20).toString('hex')}`);
  const merchant = await upsertMerchantByWallet(db, { walletAddress: wallet, payoutAddress: wallet });
  const clientId = await insertSponsoredClient(db, merchant.id, 'paymaster bench');
  await upsertAllowlistEntry(db, {
    merchantId: merchant.id,
    chainId: CHAIN_ID,
    contractAddress: TARGET.toLowerCase(),
    label: 'bench target',
  });
  await saveMerchantLimits(db, merchant.id, {
    perSenderHourlyOps: null,
    perSenderDailyUsd: null,
    perTxUsd: MERCHANT_PER_TX_CAP_USD,
    perMerchantDailyUsd: null,
    perClientDailyUsd: null,
  });
  return { merchantId: merchant.id, clientId };
}

export async function countSubmittedUsageRows(db: Db, clientId: string): Promise<number> {
  const { count } = await db
    .selectFrom('paymaster_usage')
    .where('client_id', '=', clientId)
    .where('status', '=', 'submitted')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(count);
}

/** One line of figures, failures included, as both paymaster benchmarks print them. */
export function printFigures(
  label: string,
  figures: {
    requestsPerSec: number;
    latencyP50Ms: number;
    latencyP99Ms: number;
    non2xx: number;
    errors: number;
    jsonRpcErrors?: number;
  },
): void {
  const failures = `non2xx ${figures.non2xx}, errors ${figures.errors}${figures.jsonRpcErrors === undefined ? '' : `, JSON-RPC errors ${figures.jsonRpcErrors}`}`;
  process.stdout.write(
    `  ${label.padEnd(44)} ${figures.requestsPerSec.toFixed(0).padStart(6)} req/s  p50 ${figures.latencyP50Ms.toFixed(1)} ms  p99 ${figures.latencyP99Ms.toFixed(1)} ms  (${failures})\n`,
  );
}
