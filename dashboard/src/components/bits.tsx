import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { absoluteTime, chainName, relativeTime, shortAddress } from '../format';

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Without clipboard permission: select-and-copy through a scratch field.
      const field = document.createElement('textarea');
      field.value = text;
      document.body.append(field);
      field.select();
      document.execCommand('copy');
      field.remove();
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <button type="button" class="copy" onClick={copy} aria-label={`${label}: ${text}`}>
      {copied ? 'Copied' : label}
    </button>
  );
}

export function Address({ value }: { value: string }) {
  return (
    <span class="address">
      <code title={value}>{shortAddress(value)}</code>
      <CopyButton text={value} />
    </span>
  );
}

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">—</span>;
  return (
    <time dateTime={iso} title={absoluteTime(iso)}>
      {relativeTime(iso)}
    </time>
  );
}

export function Chain({ id }: { id: number }) {
  return <span title={`chain id ${id}`}>{chainName(id)}</span>;
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge status-${status}`}>{status.replace(/_/g, ' ')}</span>;
}

export function Section({
  title,
  children,
  actions,
}: {
  title: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  return (
    <section class="card" aria-label={title}>
      <header class="card-head">
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

/** A secret the API shows once: displayed with a copy button and the warning that it will not come back. */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  return (
    <div class="notice success" role="status">
      <p>
        <strong>{label}</strong> — copy it now: it is shown only this once.
      </p>
      <p class="secret">
        <code data-testid="secret">{value}</code> <CopyButton text={value} />
      </p>
    </div>
  );
}
