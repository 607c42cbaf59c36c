/**
 * The subscribe page's script, bundled by dashboard/buildPageScripts.ts and inlined by
 * renderSubscribePage.ts under the page's CSP nonce: keeps the words of the permission in step with the
 * chosen chain and stablecoin, connects the wallet, asks it for the periodic permission, sends the signed
 * delegation to `POST /v1/subscribe/{planId}` and shows the subscription (or the service's refusal) in place.
 */
import { fromBaseUnits } from '../../../money/baseUnits';
import { SUBSCRIBE_DATA_ELEMENT_ID, type SubscribeClientData, type SubscribeOption } from '../clientData';
import { dayLabel, permissionSentences } from '../permissionWording';
import { WalletRefusal, connectAccount, grantPeriodicPermission, injectedWallet } from './wallet';

const data = JSON.parse(
  document.getElementById(SUBSCRIBE_DATA_ELEMENT_ID)!.textContent!,
) as SubscribeClientData;
// The server's clock, carried forward by the device's: a wrong device clock moves nothing.
const clockOffsetMs = Date.parse(data.serverNow) - Date.now();
const now = () => new Date(Date.now() + clockOffsetMs);

const form = document.querySelector<HTMLElement>('[data-subscribe-form]')!;
const select = form.querySelector<HTMLSelectElement>('select[name="option"]')!;
const words = form.querySelector<HTMLElement>('[data-permission-words]')!;
const accountLine = form.querySelector<HTMLElement>('[data-account]')!;
const error = form.querySelector<HTMLElement>('[data-subscribe-error]')!;
const connect = form.querySelector<HTMLButtonElement>('[data-connect]')!;
const grant = form.querySelector<HTMLButtonElement>('[data-grant]')!;
const noWallet = form.querySelector<HTMLElement>('[data-no-wallet]')!;
const subscribed = document.querySelector<HTMLElement>('[data-subscribed]')!;

let account: `0x${string}` | undefined;

/**
 * The permission starts this long before now: a chain's latest block trails the clock by seconds, and the
 * enforcer counts its periods from the start, so each period's charge, due on the clock, must find the
 * chain already inside that period (docs/decisions.md, "The subscribe page's permission start").
 */
const START_LEEWAY_SECONDS = 300;

const chosen = (): SubscribeOption =>
  data.options.find((option) => option.key === select.value) ?? data.options[0]!;

function showWords(): void {
  const option = chosen();
  const sentences = permissionSentences({
    merchantName: data.merchantName,
    tokenAmount: fromBaseUnits(BigInt(option.periodAmount), option.decimals),
    symbol: option.symbol,
    network: option.network,
    periodLabel: data.periodLabel,
    firstChargeAt: new Date(now().getTime() + data.trialDays * 86_400_000),
    trialDays: data.trialDays,
  });
  words.replaceChildren(
    ...sentences.map((sentence) => {
      const item = document.createElement('li');
      item.textContent = sentence;
      return item;
    }),
  );
}

function showError(message: string): void {
  error.textContent = message;
  error.hidden = false;
}

/** The subscribe API's answer: the subscription, or a refusal. */
interface SubscribeAnswer {
  status?: string;
  customerAccount?: string;
  currentPeriodEnd?: string;
  manageUrl?: string | null;
  message?: string;
  errors?: { field: string; message: string }[];
}

const STATUS_WORDS: Record<string, string> = {
  trialing: 'Trial',
  active: 'Active',
  past_due: 'Payment overdue',
  canceled: 'Canceled',
};

function showSubscribed(answer: SubscribeAnswer): void {
  subscribed.querySelector('[data-subscription-status]')!.textContent =
    STATUS_WORDS[answer.status ?? ''] ?? answer.status ?? '';
  subscribed.querySelector('[data-subscription-account]')!.textContent = answer.customerAccount ?? '';
  subscribed.querySelector('[data-next-label]')!.textContent =
    answer.status === 'trialing' ? 'First charge' : 'Next charge';
  subscribed.querySelector('[data-subscription-next]')!.textContent = answer.currentPeriodEnd
    ? dayLabel(new Date(answer.currentPeriodEnd))
    : '';
  if (answer.manageUrl) {
    subscribed.querySelector<HTMLAnchorElement>('[data-manage-link]')!.href = answer.manageUrl;
    subscribed.querySelector<HTMLElement>('[data-manage]')!.hidden = false;
  }
  form.hidden = true;
  subscribed.hidden = false;
}

select.addEventListener('change', showWords);
showWords();

connect.addEventListener('click', () => {
  error.hidden = true;
  const wallet = injectedWallet();
  if (!wallet) {
    noWallet.hidden = false;
    return;
  }
  connect.disabled = true;
  void connectAccount(wallet)
    .then((connected) => {
      account = connected;
      accountLine.textContent = `Your account: ${connected}`;
      accountLine.hidden = false;
      connect.hidden = true;
      grant.hidden = false;
      grant.focus();
    })
    .catch((problem: unknown) => {
      showError(problem instanceof WalletRefusal ? problem.message : 'The wallet did not connect.');
      connect.disabled = false;
    });
});

grant.addEventListener('click', () => {
  const wallet = injectedWallet();
  if (!wallet || !account) return;
  error.hidden = true;
  grant.disabled = true;
  select.disabled = true;
  const option = chosen();
  void grantPeriodicPermission(wallet, {
    option,
    account,
    periodSeconds: data.periodSeconds,
    startTime: Math.floor(now().getTime() / 1000) - START_LEEWAY_SECONDS,
    justification: `${data.merchantName}: ${data.amountLabel} every ${data.periodLabel}`,
  })
    .then(async (delegation) => {
      const response = await fetch(data.subscribeUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          chainId: option.chainId,
          token: option.symbol,
          delegation: {
            delegate: delegation.delegate,
            delegator: delegation.delegator,
            authority: delegation.authority,
            caveats: delegation.caveats.map(({ enforcer, terms, args }) => ({ enforcer, terms, args })),
            salt: delegation.salt.toString(),
            signature: delegation.signature,
          },
        }),
      });
      const answer = (await response.json().catch(() => ({}))) as SubscribeAnswer;
      if (!response.ok) {
        const field = answer.errors?.[0];
        throw new WalletRefusal(
          field ? `${field.field}: ${field.message}` : (answer.message ?? 'The subscription was refused.'),
        );
      }
      showSubscribed(answer);
    })
    .catch((problem: unknown) => {
      showError(
        problem instanceof WalletRefusal ? problem.message : 'The network is unreachable. Try again.',
      );
      grant.disabled = false;
      select.disabled = false;
    });
});
