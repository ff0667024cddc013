// The form of a key's expiry: a new one (ISO 8601 with its zone, as every date here), or none. It hands
// the change and what it will do to `ask` (KeyActions, key-actions.tsx), which confirms it.
import type { AdminKey } from '@animal-store/client/admin';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { time } from '../format.js';

/** An instant as the admin API writes it, or undefined when `text` is not one (ISO 8601 with its zone). */
const instant = (text: string) =>
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text) &&
  !Number.isNaN(Date.parse(text))
    ? new Date(text).toISOString()
    : undefined;

/** The key's expiry: a new one (ISO 8601, as every date here), or none. */
export function ExpiryForm(props: {
  apiKey: AdminKey;
  busy: boolean;
  ask: (expiresAt: string | null, says: ComponentChildren) => void;
}) {
  const { apiKey: key } = props;
  const [text, setText] = useState(key.expiresAt ?? '');
  const at = instant(text.trim());
  return (
    <form
      class="expiry"
      onSubmit={(event) => {
        event.preventDefault();
        if (!at) return;
        props.ask(
          at,
          <p>
            The key stops opening the API at {time(at)} on every instance (401, code key_expired); until then
            nothing changes. An expiry can be moved or cleared later.
          </p>,
        );
      }}
    >
      <h3>Expiry</h3>
      <label>
        Expires at (ISO 8601, e.g. 2027-01-31T00:00:00Z)
        <input
          value={text}
          spellcheck={false}
          autoComplete="off"
          aria-invalid={text.trim() !== '' && !at}
          onInput={(event) => setText(event.currentTarget.value)}
        />
      </label>
      <button type="submit" disabled={props.busy || !at || at === key.expiresAt}>
        Set expiry
      </button>
      {key.expiresAt !== null && (
        <button
          type="button"
          disabled={props.busy}
          onClick={() => props.ask(null, <p>The key no longer expires: it opens the API until revoked.</p>)}
        >
          No expiry
        </button>
      )}
    </form>
  );
}
