import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` now and on every change of `deps`; `reload` runs it again (after a change the page made). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: true });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) =>
        current &&
        setState({
          error: error instanceof ApiError ? error : new ApiError(0, String(error)),
          loading: false,
        }),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** The three states every list and panel has: loading, error (with retry), empty; else the content. */
export function Async<T>({
  state,
  isEmpty,
  empty,
  children,
}: {
  state: Loaded<T>;
  isEmpty?: (data: T) => boolean;
  empty?: ComponentChildren;
  children: (data: T) => ComponentChildren;
}) {
  if (state.error)
    return (
      <div class="notice error" role="alert">
        <p>{state.error.message}</p>
        <button type="button" onClick={state.reload}>
          Try again
        </button>
      </div>
    );
  if (state.data === undefined)
    return (
      <p class="muted" role="status">
        Loading…
      </p>
    );
  if (isEmpty?.(state.data)) return <div class="notice empty">{empty ?? 'Nothing here yet.'}</div>;
  return <>{children(state.data)}</>;
}
