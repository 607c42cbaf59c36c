/** The token × network chooser: shows the one panel of the chosen pair, and only the networks that carry the token. */

function checkedValue(name: string): string | null {
  return document.querySelector<HTMLInputElement>(`input[name="${name}"]:checked`)?.value ?? null;
}

export function startOptionChooser(): void {
  const panels = [...document.querySelectorAll<HTMLElement>('[data-option]')];
  const networkInputs = [...document.querySelectorAll<HTMLInputElement>('input[name="network"]')];

  const showSelectedOption = () => {
    const token = checkedValue('token');
    const chainsWithToken = panels
      .filter((panel) => panel.getAttribute('data-symbol') === token)
      .map((panel) => panel.getAttribute('data-chain-id'));
    for (const input of networkInputs) input.disabled = !chainsWithToken.includes(input.value);
    let chain = checkedValue('network');
    if (!chainsWithToken.includes(chain)) {
      const firstAvailable = networkInputs.find((input) => !input.disabled);
      if (firstAvailable) {
        firstAvailable.checked = true;
        chain = firstAvailable.value;
      }
    }
    for (const panel of panels) {
      panel.hidden = !(
        panel.getAttribute('data-symbol') === token && panel.getAttribute('data-chain-id') === chain
      );
    }
  };

  document.querySelectorAll('input[name="token"], input[name="network"]').forEach((input) => {
    input.addEventListener('change', showSelectedOption);
  });
  showSelectedOption();
}
