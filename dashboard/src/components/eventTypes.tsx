import { useState } from 'preact/hooks';
import { webhookEventGroups } from '../../../webhooks/eventTypes';

/**
 * The event types an endpoint can receive, from the service's one list (webhooks/eventTypes.ts, bundled
 * with the page as chain names are): grouped, one line each on when it is sent. A type the service
 * adds appears here with the next build; none is written in the page.
 */
const GROUPS = webhookEventGroups();

let choicesCount = 0;

/** Checkboxes named `events`, ticked for `selected`; the API's message about `events` below them. */
export function EventTypeChoices({ selected, error }: { selected: readonly string[]; error?: string }) {
  const [id] = useState(() => `event-types-${++choicesCount}`);
  return (
    <fieldset
      class={`field event-types${error ? ' invalid' : ''}`}
      aria-describedby={error ? `${id}-error` : undefined}
    >
      <legend>Event types</legend>
      {GROUPS.map(({ group, types }) => (
        <fieldset key={group} class="event-group">
          <legend>{group}</legend>
          {types.map(({ type, sentWhen }) => (
            <div key={type} class="event-type">
              <label class="check">
                <input
                  type="checkbox"
                  name="events"
                  value={type}
                  defaultChecked={selected.includes(type)}
                  aria-describedby={`${id}-${type}`}
                />
                <code>{type}</code>
              </label>
              <p class="hint" id={`${id}-${type}`}>
                {sentWhen}
              </p>
            </div>
          ))}
        </fieldset>
      ))}
      {error && (
        <p class="field-error" id={`${id}-error`} role="alert">
          {error}
        </p>
      )}
    </fieldset>
  );
}

/** The ticked types, in the list's order (the API decides whether none is acceptable). */
export function chosenEventTypes(data: FormData): string[] {
  return data.getAll('events').map(String);
}

/** The types an endpoint receives, as a list of short codes. */
export function EventTypeList({ types }: { types: readonly string[] }) {
  return (
    <ul class="type-list" aria-label="Event types it receives">
      {types.map((type) => (
        <li key={type}>
          <code>{type}</code>
        </li>
      ))}
    </ul>
  );
}
