import type { ComponentChildren, JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from '../api';

export interface FormState {
  busy: boolean;
  /** The API's message, and its part about each field it names (shown beside those fields). */
  error?: { fields: Record<string, string>; message: string };
  submit: (event: JSX.TargetedEvent<HTMLFormElement>) => Promise<void>;
  errorFor: (field: string) => string | undefined;
}

/**
 * One submission at a time; a 4xx lands beside the fields it names, anything else beside the button.
 * `fieldOfStatus` places a refusal whose message names no field beside the one it is about (e.g. a 409
 * "already claimed" beside the address).
 */
export function useForm(
  action: (data: FormData) => Promise<void>,
  fields: string[] = [],
  fieldOfStatus: Record<number, string> = {},
): FormState {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<FormState['error']>();
  const submit = async (event: JSX.TargetedEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(undefined);
    try {
      await action(new FormData(event.currentTarget));
    } catch (caught) {
      const apiError = caught instanceof ApiError ? caught : new ApiError(0, String(caught));
      const named = Object.entries(apiError.fieldErrors).filter(([field]) => fields.includes(field));
      const about = fieldOfStatus[apiError.status];
      if (named.length === 0 && about) named.push([about, apiError.message]);
      setError({ fields: Object.fromEntries(named), message: apiError.message });
    } finally {
      setBusy(false);
    }
  };
  return {
    busy,
    error,
    submit,
    errorFor: (field) => error?.fields[field],
  };
}

let fieldCount = 0;

export function Field({
  label,
  error,
  hint,
  children,
}: {
  label: string;
  error?: string;
  hint?: string;
  children: (props: {
    id: string;
    'aria-invalid'?: boolean;
    'aria-describedby'?: string;
  }) => ComponentChildren;
}) {
  const [id] = useState(() => `field-${++fieldCount}`);
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class={`field${error ? ' invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children({ id, 'aria-invalid': error ? true : undefined, 'aria-describedby': described || undefined })}
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={`${id}-error`} role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

export function FormError({ form }: { form: FormState }) {
  if (!form.error || Object.keys(form.error.fields).length > 0) return null;
  return (
    <p class="field-error" role="alert">
      {form.error.message}
    </p>
  );
}

/** A date as its UTC day, `YYYY-MM-DD` (what `<input type="date">` and the API's `from`/`to` take). */
export const utcDay = (date: Date) => date.toISOString().slice(0, 10);

/**
 * The `from` and `to` fields of a UTC date range (the exports' query), this month so far by default, each
 * with the API's message for it.
 */
export function UtcDateRangeFields({ form }: { form: FormState }) {
  const today = new Date();
  const monthStart = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1));
  return (
    <div class="grid">
      <Field label="From (UTC date)" error={form.errorFor('from')}>
        {(props) => <input {...props} name="from" type="date" defaultValue={utcDay(monthStart)} />}
      </Field>
      <Field label="To (UTC date)" error={form.errorFor('to')}>
        {(props) => <input {...props} name="to" type="date" defaultValue={utcDay(today)} />}
      </Field>
    </div>
  );
}
