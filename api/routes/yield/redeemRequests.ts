import { getAddress, type Address, type Hex } from 'viem';
import { z } from 'zod';
import { findContractSets } from '../../../db/yieldDeployments';
import { readRedeemRequests, type LogPosition, type RedeemRequestView } from '../../../yield/redeemRequests';
import type { AppContext } from '../../appContext';
import { serviceUnavailable } from '../../httpErrors';
import { tooManyRequests } from '../../rateLimits';
import { defineRoute, type AnyRoute } from '../../routing/route';
import { YIELD_BASE, requireDeployment } from './deployments/deploymentAccess';
import { PAGE_SIZES } from '../../../config/pageSizes';
import { pageLimit } from '../../routing/pageQuery';

/**
 * | GET | /v1/merchants/me/yield-deployments/{id}/redeem-requests | `limit` 1 to 50 default 20; `cursor` (the previous page's `nextCursor`); `controller` | 200 cursor-paged, newest first |
 *
 * The ERC-7540 redeem requests made on a deployment's vaults while sUSDe's cooldown is on, read from the chain
 * (yield/redeemRequests.ts): requested, pending with the time left, claimable, claimed. A deployment without
 * vaults has none; a foreign or unknown id answers 404; a chain that does not answer 503. A page reads up to
 * ten log windows, so a merchant reads at most YIELD_REDEEM_REQUESTS_PER_MERCHANT_PER_MINUTE pages a minute
 * (service-wide), whichever deployment: past it 429 with Retry-After, before any work (security review III,
 * finding 7).
 */

const CURSOR = /^(\d{1,20})-(\d{1,9})$/;

const query = z.object({
  limit: pageLimit(PAGE_SIZES.redeemRequests),
  cursor: z.string().regex(CURSOR, "must be a previous page's nextCursor").optional(),
  controller: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte address')
    .transform((value) => getAddress(value.toLowerCase()))
    .optional(),
});

const amount = z.string().describe('Base units, decimal string');

const redeemRequest = z
  .object({
    vault: z.string(),
    symbol: z.string().describe("The vault asset's symbol"),
    decimals: z.number().describe("The vault asset's decimals"),
    requestId: z.string(),
    controller: z.string().describe('Who claims the request'),
    owner: z.string().describe('Whose shares were burnt for it'),
    requestedShares: amount,
    requestedAssets: amount
      .nullable()
      .describe('Assets fixed at the request; null where the RPC node keeps no state of that block'),
    unclaimedShares: amount,
    unclaimedAssets: amount,
    status: z.enum(['pending', 'claimable', 'claimed']),
    requestedAt: z.string(),
    claimableAt: z.string().nullable().describe('End of the cooldown; null once claimed or with no cooldown'),
    secondsLeft: z
      .number()
      .nullable()
      .describe("Seconds of the chain's clock until claimable (pending only)"),
    txHash: z.string(),
    blockNumber: z.string(),
  })
  .meta({ id: 'YieldRedeemRequest' });

const redeemRequestPage = z
  .object({
    data: z.array(redeemRequest),
    chainTime: z.string().describe("The latest block's time, the clock secondsLeft counts on"),
    nextCursor: z.string().nullable().describe('Older requests: pass as cursor; null when there are none'),
  })
  .meta({ id: 'YieldRedeemRequestPage' });

function toItem(view: RedeemRequestView): z.infer<typeof redeemRequest> {
  return {
    vault: view.vault,
    symbol: view.symbol,
    decimals: view.decimals,
    requestId: view.requestId.toString(),
    controller: view.controller,
    owner: view.owner,
    requestedShares: view.requestedShares.toString(),
    requestedAssets: view.requestedAssets?.toString() ?? null,
    unclaimedShares: view.unclaimedShares.toString(),
    unclaimedAssets: view.unclaimedAssets.toString(),
    status: view.status,
    requestedAt: view.requestedAt.toISOString(),
    claimableAt: view.claimableAt?.toISOString() ?? null,
    secondsLeft: view.secondsLeft,
    txHash: view.txHash,
    blockNumber: view.blockNumber.toString(),
  };
}

const encodeCursor = (position: LogPosition) => `${position.blockNumber}-${position.logIndex}`;

function decodeCursor(cursor: string): LogPosition {
  const [, block, logIndex] = CURSOR.exec(cursor)!;
  return { blockNumber: BigInt(block!), logIndex: Number(logIndex) };
}

export function yieldRedeemRequestRoutes(app: AppContext): AnyRoute[] {
  /** The block each contract set was deployed in never changes: one receipt read per set per process. */
  const deployBlocks = new Map<string, Promise<bigint>>();

  return [
    defineRoute({
      auth: 'jwt',
      tag: 'Yield deployments',
      audience: 'dashboard',
      method: 'get',
      path: `${YIELD_BASE}/:id/redeem-requests`,
      summary: "Redemption requests on the deployment's vaults (ERC-7540, sUSDe cooldown), newest first",
      params: z.object({ id: z.string().uuid() }),
      query,
      responses: {
        200: { description: 'A page of redeem requests', schema: redeemRequestPage },
        404: { description: 'Unknown id' },
        429: {
          description:
            'More than YIELD_REDEEM_REQUESTS_PER_MERCHANT_PER_MINUTE (30) pages a minute for this merchant',
        },
        503: { description: "The deployment's chain did not answer" },
      },
      async handler({ merchantId, params, query: { limit, cursor, controller } }) {
        const retryAfterSec = await app.requestRates.yieldRedeemRequests.take(merchantId);
        if (retryAfterSec !== undefined)
          throw tooManyRequests('redeem-request reads for this merchant', retryAfterSec);
        const row = await requireDeployment(app, merchantId, params.id);
        const [set] = row.contract_set_id ? await findContractSets(app.db, [row.contract_set_id]) : [];
        if (!set)
          return { status: 200, body: { data: [], chainTime: app.now().toISOString(), nextCursor: null } };
        const client = app.publicClients.forChain(row.chain_id);
        if (!client) throw serviceUnavailable(`No RPC configured for chain ${row.chain_id}`);
        const network = app.networks.byChainId(row.chain_id);
        try {
          let deployedAt = deployBlocks.get(set.id);
          if (!deployedAt) {
            deployedAt = client
              .getTransactionReceipt({ hash: set.tx_hash as Hex })
              .then((receipt) => receipt.blockNumber);
            deployedAt.catch(() => deployBlocks.delete(set.id));
            deployBlocks.set(set.id, deployedAt);
          }
          const page = await readRedeemRequests(client, {
            vaults: set.vaults.map((vault) => ({
              address: vault.address as Address,
              symbol: vault.symbol,
              decimals: network?.tokens.find((token) => token.symbol === vault.symbol)?.decimals ?? 18,
            })),
            deployedAtBlock: await deployedAt,
            before: cursor ? decodeCursor(cursor) : undefined,
            limit,
            controller,
            windowBlocks: BigInt(app.config.YIELD_REDEEM_SCAN_BLOCKS),
          });
          return {
            status: 200,
            body: {
              data: page.requests.map(toItem),
              chainTime: page.chainTime.toISOString(),
              nextCursor: page.next ? encodeCursor(page.next) : null,
            },
          };
        } catch (error) {
          app.logger.warn({ err: error, deploymentId: row.id }, 'reading redeem requests failed');
          throw serviceUnavailable(`Chain ${row.chain_id} did not answer; try again`);
        }
      },
    }),
  ];
}
