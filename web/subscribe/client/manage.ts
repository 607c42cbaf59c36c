/**
 * The manage page's script (renderManagePage.ts, bundled as subscriptionManage.js): "Cancel subscription"
 * asks for confirmation in place, then posts the cancelation and shows when the subscription ends.
 */
import type { SubscriptionStatus } from '../../../db/schema';
import { MANAGE_DATA_ELEMENT_ID, type ManageClientData } from '../clientData';
import { endingSentence } from '../permissionWording';

const data = JSON.parse(document.getElementById(MANAGE_DATA_ELEMENT_ID)!.textContent!) as ManageClientData;
const area = document.querySelector<HTMLElement>('[data-cancel-area]')!;
const cancel = area.querySelector<HTMLButtonElement>('[data-cancel]')!;
const confirmBox = area.querySelector<HTMLElement>('[data-confirm]')!;
const yes = area.querySelector<HTMLButtonElement>('[data-confirm-yes]')!;
const no = area.querySelector<HTMLButtonElement>('[data-confirm-no]')!;
const error = area.querySelector<HTMLElement>('[data-manage-error]')!;
const ended = document.querySelector<HTMLElement>('[data-ended]')!;

cancel.addEventListener('click', () => {
  cancel.hidden = true;
  confirmBox.hidden = false;
  yes.focus();
});

no.addEventListener('click', () => {
  confirmBox.hidden = true;
  cancel.hidden = false;
  cancel.focus();
});

yes.addEventListener('click', () => {
  yes.disabled = true;
  error.hidden = true;
  void fetch(data.cancelUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    .then(async (response) => {
      const body = (await response.json().catch(() => ({}))) as {
        status?: SubscriptionStatus;
        cancelAtPeriodEnd?: boolean;
        currentPeriodEnd?: string;
        message?: string;
      };
      if (!response.ok || !body.status || !body.currentPeriodEnd)
        throw new Error(body.message ?? 'The subscription could not be canceled.');
      ended.querySelector('[data-ended-text]')!.textContent =
        endingSentence({
          status: body.status,
          cancelAtPeriodEnd: body.cancelAtPeriodEnd ?? false,
          currentPeriodEnd: new Date(body.currentPeriodEnd),
        }) ?? '';
      // No next charge any more: the facts stop promising one.
      document
        .querySelectorAll<HTMLElement>('[data-next-charge]')
        .forEach((element) => (element.hidden = true));
      area.hidden = true;
      ended.hidden = false;
    })
    .catch((problem: unknown) => {
      error.textContent =
        problem instanceof TypeError ? 'The network is unreachable. Try again.' : (problem as Error).message;
      error.hidden = false;
      yes.disabled = false;
    });
});
