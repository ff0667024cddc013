// A new key: plan (enterprise with its own limits), label, customer; a confirmation; then its secret, shown
// once with a copy button. The form's Idempotency-Key is made when the form is and kept until a key is
// created, so that sending the same form twice (a double click, a retry after a lost answer) creates one.
// It comes from `uuid`, not crypto.randomUUID, which a browser offers only to a secure context: the admin
// listener is often reached over plain http on a private address.
import type { CreatedKey, NewAdminKey } from '@animal-store/client/admin';
import { useState } from 'preact/hooks';
import { v4 as newIdempotencyKey } from 'uuid';
import { limitsText } from '../format.js';
import { keyHref } from '../route.js';
import { Confirm, NoticeLine, SecretOnce, useCall, useSigned } from '../ui.js';
import { KeyFields, type KeyFieldValues } from './key-fields.js';

export function CreateKey() {
  const { admin } = useSigned();
  const { busy, notice, run } = useCall();
  const [idempotencyKey, setIdempotencyKey] = useState(() => newIdempotencyKey());
  const [values, setValues] = useState<KeyFieldValues>({
    plan: 'free',
    perMinute: '',
    perDay: '',
    label: '',
    customerId: '',
  });
  const { plan, perMinute, perDay, label, customerId } = values;
  const [asking, setAsking] = useState(false);
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const extras = {
    ...(label.trim() && { label: label.trim() }),
    ...(customerId.trim() && { customerId: customerId.trim() }),
  };
  const key: NewAdminKey =
    plan === 'enterprise'
      ? { plan, limits: { perMinute: Number(perMinute), perDay: Number(perDay) }, ...extras }
      : { plan, ...extras };
  const create = async () => {
    setAsking(false);
    const answer = await run(() => admin.createKey(key, { idempotencyKey }));
    if (!answer) return;
    setCreated(answer);
    setIdempotencyKey(newIdempotencyKey());
  };

  return (
    <section aria-labelledby="new-title">
      <h1 id="new-title">New key</h1>
      <NoticeLine notice={notice} />
      {created && <Created created={created} />}
      <form
        class="create"
        onSubmit={(event) => {
          event.preventDefault();
          setAsking(true);
        }}
      >
        <KeyFields values={values} onChange={(change) => setValues({ ...values, ...change })} optional />
        <button type="submit" class="primary" disabled={busy}>
          Create…
        </button>
      </form>
      {asking && (
        <Confirm title="Create a key" confirm="Create" onConfirm={create} onCancel={() => setAsking(false)}>
          <p>
            A new {plan} key
            {key.limits ? ` (${limitsText({ limits: key.limits })})` : ''}
            {key.customerId ? ` for customer ${key.customerId}` : ''}
            {key.label ? `, labelled “${key.label}”` : ''}. It works on every instance at once; its secret is
            shown once, on this page.
          </p>
        </Confirm>
      )}
    </section>
  );
}

function Created({ created }: { created: CreatedKey }) {
  return (
    <div class="created">
      {created.replayed ? (
        <p role="status">
          This form had created key <a href={keyHref(created.key.id)}>{created.key.id}</a> already; its secret
          was shown then. Rotate the key for a new one.
        </p>
      ) : (
        <>
          <p role="status">
            Created key <a href={keyHref(created.key.id)}>{created.key.id}</a> ({created.key.plan}).
          </p>
          <SecretOnce label="Its secret" secret={created.secret} />
        </>
      )}
    </div>
  );
}
