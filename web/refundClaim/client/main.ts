/**
 * The refund claim page's script, bundled by dashboard/buildPageScripts.ts and inlined by
 * renderRefundClaimPage.ts under the page's CSP nonce: sends `{ chainId, address }` once the payer ticked the
 * confirmation, then shows the address received, or the service's refusal (its field message) in place.
 */
import { REFUND_CLAIM_DATA_ELEMENT_ID, type RefundClaimClientData } from '../clientData';

const data = JSON.parse(
  document.getElementById(REFUND_CLAIM_DATA_ELEMENT_ID)!.textContent!,
) as RefundClaimClientData;

const form = document.querySelector<HTMLElement>('[data-claim-form]')!;
const chain = form.querySelector<HTMLSelectElement>('select[name="chainId"]')!;
const address = form.querySelector<HTMLInputElement>('input[name="address"]')!;
const confirmed = form.querySelector<HTMLInputElement>('input[name="confirm"]')!;
const error = form.querySelector<HTMLElement>('[data-claim-error]')!;
const submit = form.querySelector<HTMLButtonElement>('[data-claim-submit]')!;
const received = document.querySelector<HTMLElement>('[data-claim-received]')!;
const summaryHint = document.querySelector<HTMLElement>('[data-claim-hint]')!;

function showError(message: string): void {
  error.textContent = message;
  error.hidden = false;
}

/** An answer of the claim API: the refund's facts, or a refusal. */
interface ClaimAnswer {
  address?: string;
  chainId?: number;
  message?: string;
  errors?: { field: string; message: string }[];
}

/** The refusal as the payer should read it: the field's own message when the service names one. */
function refusalOf(body: ClaimAnswer): string {
  const field = body.errors?.[0];
  if (field) return `${field.field === 'address' ? 'Address' : 'Network'}: ${field.message}`;
  return body.message ?? 'The refund could not take this address.';
}

submit.addEventListener('click', () => {
  error.hidden = true;
  if (!confirmed.checked) {
    showError('Tick the box to confirm the address is yours on this network.');
    return;
  }
  submit.disabled = true;
  void fetch(data.claimUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ chainId: Number(chain.value), address: address.value.trim() }),
  })
    .then(async (response) => {
      const body = (await response.json().catch(() => ({}))) as ClaimAnswer;
      if (!response.ok) {
        showError(refusalOf(body));
        submit.disabled = response.status === 409 || response.status === 410;
        return;
      }
      received.querySelector('[data-claim-address]')!.textContent = body.address ?? '';
      const network = data.networks[String(body.chainId)] ?? '';
      received.querySelector('[data-claim-network]')!.textContent = network;
      summaryHint.textContent = `Paid in ${data.token} on ${network}.`;
      form.hidden = true;
      received.hidden = false;
    })
    .catch(() => {
      showError('The network is unreachable. Try again.');
      submit.disabled = false;
    });
});
