/** Copy buttons (`data-copy`): the text to the clipboard, and "Copied" on the button for a moment. */

const COPIED_FOR_MS = 1500;

function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
  // Older browsers and plain-http previews: copy through a temporary selection.
  return new Promise((resolve, reject) => {
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'offscreen';
    document.body.appendChild(area);
    area.select();
    const copied = document.execCommand('copy');
    document.body.removeChild(area);
    if (copied) resolve();
    else reject(new Error('copy refused'));
  });
}

export function startCopyButtons(): void {
  document.addEventListener('click', (event) => {
    const button = (event.target as Element).closest<HTMLElement>('[data-copy]');
    if (!button) return;
    copyText(button.getAttribute('data-copy')!).then(
      () => {
        button.textContent = 'Copied';
        button.classList.add('copied');
        setTimeout(() => {
          button.textContent = 'Copy';
          button.classList.remove('copied');
        }, COPIED_FOR_MS);
      },
      () => {
        button.textContent = 'Select & copy';
      },
    );
  });
}
