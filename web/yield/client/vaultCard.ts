import type { YieldSiteClientVault } from '../clientData';

/** A vault's card on the page (renderYieldSite.ts draws it): its figures, forms, request list and message line. */
export function vaultElements(vault: YieldSiteClientVault) {
  const root = document.querySelector<HTMLElement>(`[data-vault="${vault.address}"]`)!;
  const find = <T extends Element = HTMLElement>(selector: string) => root.querySelector<T>(selector);
  return {
    position: find('[data-position]')!,
    total: find('[data-total-assets]')!,
    message: find('[data-message]')!,
    deposit: find<HTMLFormElement>('[data-action="deposit"]'),
    withdraw: find<HTMLFormElement>('[data-action="withdraw"]')!,
    request: find<HTMLFormElement>('[data-action="request"]')!,
    requests: find('[data-requests]')!,
    requestList: find('[data-request-list]')!,
    claim: find<HTMLButtonElement>('[data-claim]')!,
  };
}

export type VaultElements = ReturnType<typeof vaultElements>;

/** Puts `text` on the card's message line, marked as an error or not. */
export function say(elements: VaultElements, text: string, isError = false): void {
  elements.message.textContent = text;
  elements.message.classList.toggle('error', isError);
}

/** An error's message: wallets reject with plain `{ code, message }` objects, not always Errors. */
export const errorText = (error: unknown) => (error as { message?: string } | null)?.message || String(error);
