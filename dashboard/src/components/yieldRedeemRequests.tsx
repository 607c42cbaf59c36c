import { useState } from 'preact/hooks';
import { get } from '../api';
import { formatTimeLeft } from '../../../web/timeLeft';
import { absoluteTime, formatUnits } from '../format';
import { Async, useLoad } from './async';
import { Address, StatusBadge } from './bits';

/** One ERC-7540 redemption request as GET …/yield-deployments/{id}/redeem-requests answers it. */
interface RedeemRequest {
  vault: string;
  symbol: string;
  decimals: number;
  requestId: string;
  controller: string;
  requestedAssets: string | null;
  unclaimedAssets: string;
  status: 'pending' | 'claimable' | 'claimed';
  requestedAt: string;
  claimableAt: string | null;
  secondsLeft: number | null;
}

interface RedeemRequestPage {
  data: RedeemRequest[];
  chainTime: string;
  nextCursor: string | null;
}

/** What a request pays: its open assets, or for a claimed one what it was fixed at (when the node still knows). */
function amountOf(request: RedeemRequest): string {
  const assets = request.status === 'claimed' ? request.requestedAssets : request.unclaimedAssets;
  return assets === null ? '—' : `${formatUnits(assets, request.decimals)} ${request.symbol}`;
}

/**
 * A deployment's withdrawal requests (sUSDe's cooldown on): newest first, read from the chain by the API, each
 * pending with the time left, claimable, or claimed; older pages on demand.
 */
export function YieldRedeemRequests({ deploymentId }: { deploymentId: string }) {
  const [older, setOlder] = useState<RedeemRequest[]>([]);
  const [cursor, setCursor] = useState<string | null | undefined>(undefined);
  const [olderError, setOlderError] = useState<string>();
  const base = `/v1/merchants/me/yield-deployments/${deploymentId}/redeem-requests`;
  const first = useLoad(async () => {
    const page = await get<RedeemRequestPage>(base);
    setOlder([]);
    setCursor(page.nextCursor);
    return page;
  }, [deploymentId]);
  const loadOlder = async () => {
    setOlderError(undefined);
    try {
      const page = await get<RedeemRequestPage>(`${base}?cursor=${encodeURIComponent(cursor!)}`);
      setOlder((previous) => [...previous, ...page.data]);
      setCursor(page.nextCursor);
    } catch (caught) {
      setOlderError((caught as Error).message);
    }
  };
  return (
    <div data-testid="redeem-requests">
      <h3>Withdrawal requests</h3>
      <Async
        state={first}
        isEmpty={(page) => page.data.length === 0 && !page.nextCursor}
        empty="No withdrawal requests yet. While sUSDe has its cooldown on, each customer withdrawal starts with one."
      >
        {(page) => (
          <>
            <div class="table-wrap">
              <table>
                <caption class="muted">
                  Read from the chain; time left counts on its clock (now{' '}
                  <time dateTime={page.chainTime}>{absoluteTime(page.chainTime)}</time>).
                </caption>
                <thead>
                  <tr>
                    <th>Request</th>
                    <th class="num">Amount</th>
                    <th>Status</th>
                    <th class="hide-narrow">Holder</th>
                    <th class="hide-narrow">Requested</th>
                  </tr>
                </thead>
                <tbody>
                  {[...page.data, ...older].map((request) => (
                    <tr
                      key={`${request.vault}-${request.requestId}`}
                      data-testid="redeem-request"
                      data-status={request.status}
                    >
                      <td>#{request.requestId}</td>
                      <td class="num">{amountOf(request)}</td>
                      <td>
                        <StatusBadge status={request.status} />
                        {request.secondsLeft !== null && (
                          <span class="muted" data-testid="time-left">
                            {' '}
                            {formatTimeLeft(request.secondsLeft, 'minute')} left
                          </span>
                        )}
                      </td>
                      <td class="hide-narrow">
                        <Address value={request.controller} />
                      </td>
                      <td class="hide-narrow">
                        {/* The chain's clock, not this browser's: an absolute time reads right either way. */}
                        <time dateTime={request.requestedAt}>{absoluteTime(request.requestedAt)}</time>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <div class="actions">
              <button type="button" onClick={first.reload}>
                Refresh
              </button>
              {cursor && (
                <button type="button" onClick={loadOlder}>
                  Load older
                </button>
              )}
            </div>
            {olderError && (
              <p class="field-error" role="alert">
                {olderError}
              </p>
            )}
          </>
        )}
      </Async>
    </div>
  );
}
