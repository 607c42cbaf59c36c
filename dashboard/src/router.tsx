import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** Client routes under /dashboard: the api answers every one of them with the same shell. */
export const BASE = '/dashboard';

const listeners = new Set<() => void>();

export function navigate(path: string, { replace = false } = {}): void {
  const url = `${BASE}${path === '/' ? '' : path}`;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

window.addEventListener('popstate', () => {
  for (const listener of listeners) listener();
});

/** The path under /dashboard ('/' for the overview) and the query string, following navigation. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const read = () => ({
    path: location.pathname.replace(/^\/dashboard/, '').replace(/\/$/, '') || '/',
    query: new URLSearchParams(location.search),
  });
  const [current, setCurrent] = useState(read);
  useEffect(() => {
    const update = () => setCurrent(read());
    listeners.add(update);
    return () => listeners.delete(update);
  }, []);
  return current;
}

/** Matches `/sessions/:id`-style patterns; the named parts, or undefined. */
export function match(pattern: string, path: string): Record<string, string> | undefined {
  const names: string[] = [];
  const regex = new RegExp(
    `^${pattern.replace(/:(\w+)/g, (_, name: string) => {
      names.push(name);
      return '([^/]+)';
    })}$`,
  );
  const found = regex.exec(path);
  if (!found) return undefined;
  return Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(found[index + 1]!)]));
}

/** An in-app link: a real href (open in a new tab works), navigated without a reload. */
export function Link({
  to,
  children,
  class: className,
  current,
}: {
  to: string;
  children: ComponentChildren;
  class?: string;
  current?: boolean;
}) {
  return (
    <a
      href={`${BASE}${to === '/' ? '' : to}`}
      class={className}
      aria-current={current ? 'page' : undefined}
      onClick={(event) => {
        if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
        event.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}
