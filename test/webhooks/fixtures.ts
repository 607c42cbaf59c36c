import { randomUUID } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Db } from '../../db/client';
import { upsertMerchantByWallet } from '../../db/merchants';
import { insertSessionWithOptions, recordSessionDeposit, type SessionRow } from '../../db/sessions';
import { insertWebhookEndpointWithinLimit, type WebhookEndpointRow } from '../../db/webhooks';
import { generateWebhookSecret, type WebhookSecretBox } from '../../webhooks/webhookSecrets';

/** A merchant row of its own (tests isolate by data). */
export async function createMerchant(db: Db): Promise<string> {
  const { address } = privateKeyToAccount(generatePrivateKey());
  const merchant = await upsertMerchantByWallet(db, { walletAddress: address, payoutAddress: address });
  return merchant.id;
}

/** A session that has seen its deposit: `confirming`, with paidAt and txHash, as the session workflow leaves it. */
export async function createConfirmingSession(db: Db, merchantId: string): Promise<SessionRow> {
  const id = randomUUID();
  await insertSessionWithOptions(
    db,
    {
      id,
      merchant_id: merchantId,
      amount: '19.990000',
      merchant_name: 'Tea Shop',
      line_items: '[]',
      payment_option_symbols: ['USDC'],
      sandbox_mode: true,
      success_url: null,
      payout_address: '0x0000000000000000000000000000000000000001',
      expires_at: new Date(Date.now() + 3600_000),
    },
    [],
  );
  const txHash = `0x${randomUUID().replace(/-/g, '').padEnd(64, 'a')}`;
  const session = await recordSessionDeposit(db, { id, txHash, chainId: 84532, paidAt: new Date() });
  return session!;
}

/** An endpoint stored the way the API stores one; returns the row and its raw secret. */
export async function createEndpoint(
  db: Db,
  secrets: WebhookSecretBox,
  { merchantId, url, enabled = true }: { merchantId: string; url: string; enabled?: boolean },
): Promise<{ endpoint: WebhookEndpointRow; secret: string }> {
  const id = randomUUID();
  const secret = generateWebhookSecret();
  const endpoint = await insertWebhookEndpointWithinLimit(
    db,
    {
      id,
      merchantId,
      url,
      description: null,
      events: ['session.confirming'],
      enabled,
      secretCiphertext: secrets.seal(secret, id),
    },
    5,
  );
  if (endpoint === 'limit_reached') throw new Error('endpoint limit reached in a fixture');
  return { endpoint, secret };
}
