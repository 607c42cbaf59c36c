import { getAddress, type Address } from 'viem';
import type { NetworkRegistry } from '../chain/networkRegistry';
import { buildPaymentOptions } from '../chain/paymentOptions';
import { STABLECOIN_SYMBOLS, type StablecoinSymbol } from '../chain/stablecoins';
import type { Db } from './client';
import type { SessionOverpayment } from './schema';
import { toBaseUnits } from '../money/baseUnits';
import { findMerchantById } from './merchants';
import { insertSessionWithOptionsAtOnce, type SessionRow } from './sessions';

/**
 * A payment session and its options, written in one statement: the part of creating a session every
 * caller shares — the create routes and top-ups (api/sessions/createPaymentSession.ts, which adds the
 * Idempotency-Key and the workflow start) and a subscription's period (activities/subscriptions.ts, whose
 * session carries `subscription_id`). Payment options are computed exactly from the merchant's payout
 * address (or the caller's), for the networks of the session's class.
 */

/** What a session is made of (the create body's fields, validated by the caller). */
export interface PaymentSessionFields {
  /** Decimal USD, at most 6 decimals. */
  amount: string;
  merchantName?: string;
  lineItems?: unknown[];
  paymentOptionSymbols?: readonly StablecoinSymbol[];
  sandboxMode?: boolean;
  successUrl?: string;
  /** Where refunds of the session go when they name no address. */
  refundAddress?: string;
  /** `hold`: capped forwarders keep what is paid above `amount` for a refund (default `settle`). */
  overpayment?: SessionOverpayment;
}

export interface NewPaymentSession {
  id: string;
  merchantId: string;
  fields: PaymentSessionFields;
  expiresAt: Date;
  now: Date;
  /** Where each chain's forwarder settles; the merchant's payout address unless given (top-ups: the treasury). */
  payoutAddressOf?: (chainId: number) => Address;
  /** The subscription whose period this session invoices. */
  subscriptionId?: string;
}

/** The merchant is gone (its account deleted while a request or a subscription was in flight). */
export class UnknownMerchantError extends Error {
  override name = 'UnknownMerchantError';
  constructor() {
    super('Unknown merchant');
  }
}

/** No network of the session's class offers the requested stablecoins: the message is the caller's answer. */
export class NoPaymentOptionError extends Error {
  override name = 'NoPaymentOptionError';
  constructor(sandboxMode: boolean, symbols: readonly string[], overpayment: SessionOverpayment = 'settle') {
    const factory =
      overpayment === 'hold' ? 'capped forwarder factory (overpayment "hold")' : 'forwarder factory';
    super(
      `No payment option is available: no ${sandboxMode ? 'testnet' : 'mainnet'} with a deployed ${factory} offers ${symbols.join(', ')}`,
    );
  }
}

export async function insertPaymentSession(
  db: Db,
  networks: Pick<NetworkRegistry, 'paymentNetworks'>,
  { id, merchantId, fields, expiresAt, now, payoutAddressOf, subscriptionId }: NewPaymentSession,
): Promise<SessionRow> {
  const sandboxMode = fields.sandboxMode ?? false;
  const merchant = await findMerchantById(db, merchantId);
  if (!merchant) throw new UnknownMerchantError();
  const payoutAddress = getAddress(merchant.payout_address);
  const symbols = fields.paymentOptionSymbols ?? STABLECOIN_SYMBOLS;
  const options = buildPaymentOptions({
    sessionId: id,
    amountUsd: fields.amount,
    symbols,
    networks: networks.paymentNetworks(sandboxMode),
    payoutAddressOf: payoutAddressOf ?? (() => payoutAddress),
    // A held overpayment: each deposit address is a capped forwarder whose flushes settle at most the amount.
    holdCapMicroUsd: fields.overpayment === 'hold' ? toBaseUnits(fields.amount, 6) : undefined,
  });
  if (options.length === 0) throw new NoPaymentOptionError(sandboxMode, symbols, fields.overpayment);
  return insertSessionWithOptionsAtOnce(
    db,
    {
      id,
      merchant_id: merchantId,
      amount: fields.amount,
      merchant_name: fields.merchantName ?? merchant.name,
      line_items: JSON.stringify(fields.lineItems ?? []),
      payment_option_symbols: [...new Set(options.map((option) => option.symbol))],
      sandbox_mode: sandboxMode,
      success_url: fields.successUrl ?? null,
      refund_address: fields.refundAddress ?? null,
      overpayment: fields.overpayment ?? 'settle',
      payout_address: payoutAddress,
      expires_at: expiresAt,
      created_at: now,
      updated_at: now,
      ...(subscriptionId && { subscription_id: subscriptionId }),
    },
    options.map((option) => ({
      chain_id: option.chainId,
      network: option.network,
      symbol: option.symbol,
      token_address: option.tokenAddress,
      decimals: option.decimals,
      amount: option.amount,
      deposit_address: option.depositAddress,
      payout_address: option.payoutAddress,
    })),
  );
}
