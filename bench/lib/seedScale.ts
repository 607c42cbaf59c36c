import type { Client } from 'pg';
import { getAddress } from 'viem';
import { copyRows } from './seedCopy';

/**
 * Realistic history for the scale benchmark, written with COPY FROM STDIN (bench/lib/seedCopy.ts), never
 * row by row. Every value derives from the row's index (hashes, not a random generator), so a step can
 * seed rows [from, to) without remembering the earlier steps, and sample ids are recomputed from indexes.
 *
 * Row i of the history: half of the rows belong to the bench merchant (even i), the other half are spread
 * over many other merchants. Per session row: one payment option (the option templates of a session the
 * API really created, in turn), and for a completed session (60 %) its accepted, settled deposit and its
 * `session.confirming` event. Per usage row: a paymaster decision (70 % included, 5 % reverted, 2 %
 * dropped, 23 % denials). Sessions begin 200 days ago, 10 s apart (1M rows end about 84 days ago), so
 * none of them is watched by the deposit monitor (7-day late watch): the watched set is the 10k active
 * sessions seeded apart, the same at every N.
 */

export interface OptionTemplate {
  chainId: number;
  network: string;
  symbol: string;
  tokenAddress: string;
  decimals: number;
}

export interface SeedMerchant {
  id: string;
  payoutAddress: string;
}

export interface ScaleSeed {
  benchMerchant: SeedMerchant;
  otherMerchants: SeedMerchant[];
  templates: OptionTemplate[];
  /** created_at of history row 0 (sessions and usage rows). */
  historyStart: Date;
}

const SESSION_SPACING_MS = 10_000;
const USAGE_SPACING_MS = 15_000;
/** An ERC-4337 v0.7 EntryPoint address, lower-case as the paymaster stores it. */
const ENTRY_POINT = '0x0000000071727de22e5e9d8baf0edac6f37da032';
const DENIALS = ['denied_target', 'denied_rate_limit', 'denied_spend_cap', 'denied_origin'] as const;

/** murmur3's 32-bit finaliser: a bijection, so lane 0 of an id is unique per index. */
function mix32(value: number): number {
  let h = value >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const kindTags = new Map<string, number>();
/** A small distinct number per kind (ids of different kinds never collide: the tag is part of lane 1). */
function kindTag(kind: string): number {
  let tag = kindTags.get(kind);
  if (tag === undefined) kindTags.set(kind, (tag = kindTags.size + 1));
  return tag;
}

const hex8 = (value: number) => value.toString(16).padStart(8, '0');

/**
 * `lanes` × 8 hex digits derived from (kind, index), cheap (a sha256 per value costs about 4 µs, and the
 * million-row step needs about 18 values per index). Lane 0 is a bijection of the index, lane 1 starts
 * with the kind's tag: distinct (kind, index) pairs give distinct values. Not cryptographic; spread enough
 * that ids and addresses land all over their B-tree indexes, as random ones do.
 */
function digest(kind: string, index: number, lanes = 8): string {
  const tag = kindTag(kind);
  let out = hex8(mix32(index ^ 0x5bd1e995));
  out += tag.toString(16).padStart(2, '0') + hex8(mix32(index + tag * 0x9e3779b9)).slice(2);
  for (let lane = 2; lane < lanes; lane++) out += hex8(mix32(index * 31 + lane * 0x27d4eb2f + tag));
  return out;
}

/** A v4-shaped UUID derived from (kind, index). */
export function seededUuid(kind: string, index: number): string {
  const hex = digest(kind, index, 4);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Lower-case: checksumming a million addresses (keccak each) would dominate the seeding, and every lookup goes through lower(deposit_address). */
const hexAddress = (kind: string, index: number) => `0x${digest(kind, index, 5)}`;
const hex32 = (kind: string, index: number) => `0x${digest(kind, index)}`;

/** The id of history session i (for status samples). */
export const historySessionId = (index: number) => seededUuid('session', index);

export async function seedOtherMerchants(client: Client, count: number): Promise<SeedMerchant[]> {
  const merchants = Array.from({ length: count }, (_, index) => ({
    id: seededUuid('merchant', index),
    walletAddress: hexAddress('merchant-wallet', index),
    payoutAddress: getAddress(hexAddress('merchant-payout', index)),
  }));
  await copyRows(
    client,
    'merchants',
    ['id', 'wallet_address', 'name', 'payout_address', 'created_at'],
    count,
    (index) => {
      const merchant = merchants[index]!;
      return [
        merchant.id,
        merchant.walletAddress,
        `Scale merchant ${index}`,
        merchant.payoutAddress,
        '2026-01-01',
      ];
    },
  );
  return merchants.map(({ id, payoutAddress }) => ({ id, payoutAddress }));
}

function merchantOf(seed: ScaleSeed, index: number): SeedMerchant {
  return index % 2 === 0
    ? seed.benchMerchant
    : seed.otherMerchants[(index >> 1) % seed.otherMerchants.length]!;
}

/** Base units of `cents` hundredths of a token with `decimals` decimals. */
const baseUnits = (cents: number, decimals: number) =>
  (BigInt(cents) * 10n ** BigInt(decimals - 2)).toString();

/**
 * `count` open sessions of the bench merchant (awaiting payment, expiring in a day), each with one option
 * on `template`'s chain and token: the deposit addresses the monitor watches. Returns them checksummed
 * with each option's expected base units.
 */
export async function seedActiveSessions(
  client: Client,
  seed: ScaleSeed,
  template: OptionTemplate,
  count: number,
): Promise<{ sessionId: string; depositAddress: string; amount: string }[]> {
  const now = Date.now();
  const created = new Date(now - 10 * 60_000).toISOString();
  const expires = new Date(now + 24 * 3600_000).toISOString();
  const active = Array.from({ length: count }, (_, index) => ({
    sessionId: seededUuid('active-session', index),
    depositAddress: getAddress(hexAddress('active-deposit', index)),
    cents: 2500 + (index % 1000),
  }));
  await copyRows(
    client,
    'sessions',
    [
      'id',
      'merchant_id',
      'amount',
      'merchant_name',
      'payment_option_symbols',
      'sandbox_mode',
      'payout_address',
      'status',
      'expires_at',
      'webhook_delivered',
      'workflow_started_at',
      'created_at',
      'updated_at',
    ],
    count,
    (index) => {
      const session = active[index]!;
      return [
        session.sessionId,
        seed.benchMerchant.id,
        (session.cents / 100).toFixed(2),
        'Scale Shop',
        `{${template.symbol}}`,
        true,
        seed.benchMerchant.payoutAddress,
        'awaiting_payment',
        expires,
        false,
        created,
        created,
        created,
      ];
    },
  );
  await copyRows(client, 'payment_options', OPTION_COLUMNS, count, (index) => {
    const session = active[index]!;
    return [
      seededUuid('active-option', index),
      session.sessionId,
      template.chainId,
      template.network,
      template.symbol,
      template.tokenAddress,
      template.decimals,
      baseUnits(session.cents, template.decimals),
      session.depositAddress,
      seed.benchMerchant.payoutAddress,
      expires,
      created,
    ];
  });
  return active.map((session) => ({
    sessionId: session.sessionId,
    depositAddress: session.depositAddress,
    amount: baseUnits(session.cents, template.decimals),
  }));
}

const OPTION_COLUMNS = [
  'id',
  'session_id',
  'chain_id',
  'network',
  'symbol',
  'token_address',
  'decimals',
  'amount',
  'deposit_address',
  'payout_address',
  'session_expires_at',
  'created_at',
] as const;

export interface SeededCounts {
  sessions: number;
  paymentOptions: number;
  deposits: number;
  events: number;
  paymasterUsage: number;
  /** COPY time per table, row generation included. */
  seconds?: Record<string, number>;
}

const isCompleted = (index: number) => index % 20 < 12;

/** History rows [from, to) of sessions, payment options, deposits, events and paymaster usage, one COPY per table. */
export async function seedHistory(
  client: Client,
  seed: ScaleSeed,
  from: number,
  to: number,
): Promise<SeededCounts> {
  const count = to - from;
  const seconds: Record<string, number> = {};
  let last = performance.now();
  let table = '';
  const mark = (next = '') => {
    const now = performance.now();
    if (table) seconds[table] = (now - last) / 1000;
    last = now;
    table = next;
  };
  const start = seed.historyStart.getTime();
  const at = (index: number, offsetMs = 0) =>
    new Date(start + index * SESSION_SPACING_MS + offsetMs).toISOString();
  const cents = (index: number) => 1000 + (index % 49_000);
  const template = (index: number) => seed.templates[index % seed.templates.length]!;

  mark('sessions');
  const sessions = await copyRows(
    client,
    'sessions',
    [
      'id',
      'merchant_id',
      'amount',
      'merchant_name',
      'line_items',
      'payment_option_symbols',
      'sandbox_mode',
      'payout_address',
      'status',
      'expires_at',
      'paid_at',
      'tx_hash',
      'paid_chain_id',
      'failure_reason',
      'webhook_delivered',
      'workflow_started_at',
      'created_at',
      'updated_at',
      'settled_amount',
    ],
    count,
    (offset) => {
      const index = from + offset;
      const bucket = index % 20;
      const completed = bucket < 12;
      const amount = (cents(index) / 100).toFixed(2);
      return [
        historySessionId(index),
        merchantOf(seed, index).id,
        amount,
        'Scale Shop',
        index % 5 === 0 ? `[{"name":"Item ${index % 97}","quantity":1,"unitPrice":"${amount}"}]` : '[]',
        `{${template(index).symbol}}`,
        index % 4 === 0,
        merchantOf(seed, index).payoutAddress,
        completed ? 'completed' : bucket === 19 ? 'failed' : 'expired',
        at(index, 3600_000),
        completed ? at(index, 300_000) : null,
        completed ? hex32('tx', index) : null,
        completed ? template(index).chainId : null,
        bucket === 19 ? 'forwarder deployment failed' : null,
        completed,
        at(index, 50),
        at(index),
        at(index, completed ? 900_000 : 3600_000),
        completed ? amount : '0',
      ];
    },
  );

  mark('paymentOptions');
  const paymentOptions = await copyRows(client, 'payment_options', OPTION_COLUMNS, count, (offset) => {
    const index = from + offset;
    const option = template(index);
    return [
      seededUuid('option', index),
      historySessionId(index),
      option.chainId,
      option.network,
      option.symbol,
      option.tokenAddress,
      option.decimals,
      baseUnits(cents(index), option.decimals),
      hexAddress('deposit', index),
      merchantOf(seed, index).payoutAddress,
      at(index, 3600_000),
      at(index),
    ];
  });

  // Completed sessions only: 12 of every 20 indexes.
  const completedIndexes: number[] = [];
  for (let index = from; index < to; index++) if (isCompleted(index)) completedIndexes.push(index);
  mark('deposits');
  const deposits = await copyRows(
    client,
    'deposits',
    [
      'id',
      'session_id',
      'chain_id',
      'token_address',
      'deposit_address',
      'amount',
      'tx_hash',
      'log_index',
      'block_number',
      'kind',
      'settled_at',
      'created_at',
    ],
    completedIndexes.length,
    (position) => {
      const index = completedIndexes[position]!;
      const option = template(index);
      return [
        seededUuid('deposit', index),
        historySessionId(index),
        option.chainId,
        option.tokenAddress.toLowerCase(),
        hexAddress('deposit', index),
        baseUnits(cents(index), option.decimals),
        hex32('tx', index),
        index % 64,
        20_000_000 + index,
        'accepted',
        at(index, 600_000),
        at(index, 300_000),
      ];
    },
  );
  mark('events');
  const events = await copyRows(
    client,
    'events',
    ['id', 'type', 'merchant_id', 'session_id', 'payload', 'created_at'],
    completedIndexes.length,
    (position) => {
      const index = completedIndexes[position]!;
      const id = `evt_${seededUuid('event', index)}`;
      const payload = JSON.stringify({
        id,
        type: 'session.confirming',
        createdAt: at(index, 300_000),
        data: {
          session: {
            id: historySessionId(index),
            merchantName: 'Scale Shop',
            amount: (cents(index) / 100).toFixed(2),
            status: 'confirming',
            expiresAt: at(index, 3600_000),
            createdAt: at(index),
            paidAt: at(index, 300_000),
            txHash: hex32('tx', index),
          },
        },
      });
      return [
        id,
        'session.confirming',
        merchantOf(seed, index).id,
        historySessionId(index),
        payload,
        at(index, 300_000),
      ];
    },
  );

  const usageAt = (index: number, offsetMs = 0) =>
    new Date(start + index * USAGE_SPACING_MS + offsetMs).toISOString();
  mark('paymasterUsage');
  const paymasterUsage = await copyRows(
    client,
    'paymaster_usage',
    [
      'merchant_id',
      'client_id',
      'method',
      'chain_id',
      'mode',
      'status',
      'reason',
      'sender',
      'entry_point',
      'user_op_hash',
      'targets',
      'created_at',
      'eth_usd_price',
      'estimated_gas_cost_wei',
      'estimated_cost_usd',
      'valid_until',
      'actual_gas_cost',
      'actual_gas_used',
      'tx_hash',
      'block_number',
    ],
    count,
    (offset) => {
      const index = from + offset;
      const merchant = merchantOf(seed, index);
      const bucket = index % 100;
      const status =
        bucket < 70
          ? 'onchain_success'
          : bucket < 75
            ? 'onchain_reverted'
            : bucket < 77
              ? 'dropped'
              : DENIALS[bucket % DENIALS.length]!;
      const signed = !status.startsWith('denied_');
      const included = status === 'onchain_success' || status === 'onchain_reverted';
      const gasUsed = 90_000 + (index % 60_000);
      const estimatedWei = BigInt(gasUsed) * 2n * 1_500_000_000n;
      return [
        merchant.id,
        `pmc_test_${merchant.id.replace(/-/g, '')}`,
        'pm_getPaymasterData',
        template(index).chainId,
        index % 3 === 0 ? 'user_paid' : 'sponsored',
        status,
        signed ? null : `${status.slice('denied_'.length)} refused by policy`,
        hexAddress('sender', index % 50_000),
        ENTRY_POINT,
        signed ? hex32('user-op', index) : null,
        `{${hexAddress('target', index % 500)}}`,
        usageAt(index),
        signed ? '3012.45678901' : null,
        signed ? estimatedWei.toString() : null,
        signed ? ((Number(estimatedWei) / 1e18) * 3012.45678901 * 1.1).toFixed(6) : null,
        signed ? usageAt(index, 600_000) : null,
        included ? (BigInt(gasUsed) * 1_500_000_000n).toString() : null,
        included ? String(gasUsed) : null,
        included ? hex32('op-tx', index) : null,
        included ? 20_000_000 + index : null,
      ];
    },
  );
  mark();
  return { sessions, paymentOptions, deposits, events, paymasterUsage, seconds };
}
