import type { YieldSiteClientVault } from '../clientData';
import { formatAmount, parseAmount } from './amounts';
import { claim, deposit, requestWithdrawal, withdraw, type VaultAction } from './vaultActions';
import { errorText, say, vaultElements, type VaultElements } from './vaultCard';
import { refresh } from './vaultReadings';
import { account } from './wallet';

/** A form's submit runs its action with the typed amount, then reads the vault again whatever happened. */
function bindForm(
  vault: YieldSiteClientVault,
  chainId: number,
  elements: VaultElements,
  form: HTMLFormElement,
  act: VaultAction,
) {
  const input = form.elements.namedItem('amount') as HTMLInputElement;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!account) return say(elements, 'Connect a wallet first.', true);
    const amount = parseAmount(input.value, vault.decimals);
    if (amount === null)
      return say(elements, `Enter a positive amount (at most ${vault.decimals} decimals).`, true);
    const button = form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
    button.disabled = true;
    try {
      await act(vault, amount, account, chainId);
      input.value = '';
    } catch (error) {
      say(elements, errorText(error), true);
    } finally {
      button.disabled = false;
      await refresh(vault).catch(() => {});
    }
  });
}

/** "Max" fills in the whole position, to the last unit. */
function bindMax(vault: YieldSiteClientVault, elements: VaultElements, form: HTMLFormElement) {
  form.querySelector('[data-max]')!.addEventListener('click', () => {
    const units = elements.position.getAttribute('data-units');
    if (units) {
      (form.elements.namedItem('amount') as HTMLInputElement).value = formatAmount(
        BigInt(units),
        vault.decimals,
        vault.decimals,
      );
    }
  });
}

function bindClaim(vault: YieldSiteClientVault, chainId: number, elements: VaultElements) {
  elements.claim.addEventListener('click', async () => {
    elements.claim.disabled = true;
    try {
      await claim(vault, account!, chainId);
    } catch (error) {
      say(elements, errorText(error), true);
    } finally {
      elements.claim.disabled = false;
      await refresh(vault).catch(() => {});
    }
  });
}

/** Wires a vault card's deposit, withdraw and request forms, their Max buttons and the claim button. */
export function bindVault(vault: YieldSiteClientVault, chainId: number): void {
  const elements = vaultElements(vault);
  const forms: [HTMLFormElement | null, VaultAction][] = [
    [elements.deposit, deposit],
    [elements.withdraw, withdraw],
    [elements.request, requestWithdrawal],
  ];
  for (const [form, act] of forms) if (form) bindForm(vault, chainId, elements, form, act);
  for (const form of [elements.withdraw, elements.request]) bindMax(vault, elements, form);
  bindClaim(vault, chainId, elements);
}
