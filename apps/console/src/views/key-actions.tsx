// What can be done to a key, each behind a confirmation that says what will happen: change its plan,
// limits, label or customer; set or clear its expiry; disable it or enable it again; rotate its secret
// with a grace period; revoke it; end its ban. The answer (or
// the Error body's message) is shown where the action was asked for.
import {
  type AdminKey,
  type AdminKeyUpdate,
  adminLimits,
  type KeyUsage,
  type RotatedAdminKey,
} from '@animal-store/client/admin';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { count, limitsText, time } from '../format.js';
import { Confirm, NoticeLine, SecretOnce, useCall, useSigned } from '../ui.js';
import { KeyFields, type KeyFieldValues } from './key-fields.js';

type Pending = { title: string; confirm: string; says: ComponentChildren; act: () => Promise<unknown> };

const inForce =
  'In force on every instance within 5 seconds; what the key used in its running minute and day still counts.';

/** A running window the key has used up (remaining 0), as the usage read says it. */
type UsedUp = KeyUsage['windows'][number];

/**
 * Whether a text field was edited into a new value: not when it is as stored (a label stored with spaces
 * around it is not offered trimmed to a person who touched nothing), nor when only spaces around it changed.
 */
const edited = (value: string, stored: string | null) =>
  value !== (stored ?? '') && value.trim() !== (stored ?? '').trim();

export function KeyActions(props: {
  apiKey: AdminKey;
  bannedUntil: string | null;
  /** Its running windows with nothing left: an unban alone lets the key in only when they end. */
  usedUp: UsedUp[];
  onChanged: () => void;
}) {
  const { apiKey: key } = props;
  const { admin } = useSigned();
  const { busy, notice, run } = useCall();
  const [pending, setPending] = useState<Pending | null>(null);
  const [rotated, setRotated] = useState<RotatedAdminKey | null>(null);
  const act = async () => {
    const chosen = pending;
    setPending(null);
    if (!chosen) return;
    const result = await run(chosen.act, () => `Done: ${chosen.title.toLowerCase()}.`);
    if (result !== undefined) props.onChanged();
  };
  const revoked = key.revokedAt !== null;

  return (
    <section aria-labelledby="actions-title">
      <h2 id="actions-title">Actions</h2>
      <NoticeLine notice={notice} />
      {rotated && (
        <div class="rotated">
          <SecretOnce label={`New secret of key ${rotated.id}`} secret={rotated.secret} />
          <p>
            The previous secret works until{' '}
            {time(rotated.previousSecretValidUntil, 'now: it no longer works')}.
          </p>
        </div>
      )}
      {!revoked && (
        <ChangeForm
          apiKey={key}
          busy={busy}
          ask={(change, says) =>
            setPending({
              title: `Change key ${key.id}`,
              confirm: 'Change',
              says,
              act: () => admin.updateKey(key.id, change),
            })
          }
        />
      )}
      {!revoked && (
        <ExpiryForm
          apiKey={key}
          busy={busy}
          ask={(expiresAt, says) =>
            setPending({
              title: expiresAt === null ? `Clear key ${key.id}'s expiry` : `Set key ${key.id}'s expiry`,
              confirm: expiresAt === null ? 'Clear the expiry' : 'Set the expiry',
              says,
              act: () => admin.updateKey(key.id, { expiresAt }),
            })
          }
        />
      )}
      <div class="action-row">
        {!revoked && (
          <button
            type="button"
            disabled={busy}
            onClick={() =>
              setPending(
                key.disabledAt === null
                  ? {
                      title: `Disable key ${key.id}`,
                      confirm: 'Disable',
                      says: (
                        <p>
                          Every instance refuses the key within 5 seconds (401, code key_disabled) until it is
                          enabled again. Its plan, windows and usage are kept.
                        </p>
                      ),
                      act: () => admin.updateKey(key.id, { disabled: true }),
                    }
                  : {
                      title: `Enable key ${key.id}`,
                      confirm: 'Enable',
                      says: <p>The key opens the API again within 5 seconds on every instance.</p>,
                      act: () => admin.updateKey(key.id, { disabled: false }),
                    },
              )
            }
          >
            {key.disabledAt === null ? 'Disable' : 'Enable'}
          </button>
        )}
        {!revoked && (
          <RotateForm
            keyId={key.id}
            busy={busy}
            ask={(grace, says) =>
              setPending({
                title: `Rotate key ${key.id}`,
                confirm: 'Rotate',
                says,
                act: async () => {
                  const answer = await admin.rotateKey(key.id, { gracePeriodSeconds: grace });
                  setRotated(answer);
                  return answer;
                },
              })
            }
          />
        )}
        {props.bannedUntil && (
          <button
            type="button"
            disabled={busy}
            onClick={() =>
              setPending({
                title: `Unban key ${key.id}`,
                confirm: 'Unban',
                says: (
                  <p>
                    The key's ban ends now (it would end {time(props.bannedUntil)}).{' '}
                    {props.usedUp.length === 0
                      ? 'Its requests are answered again within 5 seconds on every instance.'
                      : `Its ${props.usedUp.map((w) => w.name).join(' and ')} ${props.usedUp.length > 1 ? 'are' : 'is'} used up, though: its requests are answered 429 until ${props.usedUp.map((w) => time(w.resetAt)).join(' and ')}. "Unban and reset" lets it in now.`}
                  </p>
                ),
                act: () => admin.unbanKey(key.id).then(() => true),
              })
            }
          >
            Unban
          </button>
        )}
        {props.bannedUntil && props.usedUp.length > 0 && (
          <button
            type="button"
            disabled={busy}
            onClick={() =>
              setPending({
                title: `Unban and reset key ${key.id}`,
                confirm: 'Unban and reset',
                says: (
                  <p>
                    The key's ban ends now, and its {props.usedUp.map((w) => w.name).join(' and ')} starts
                    over with its whole limit: its requests are answered again within 5 seconds on every
                    instance. What it used before still counts in its usage per day.
                  </p>
                ),
                act: () =>
                  admin.unbanKey(key.id, { reset: props.usedUp.map((w) => w.name) }).then(() => true),
              })
            }
          >
            Unban and reset
          </button>
        )}
        {!revoked && (
          <button
            type="button"
            class="danger"
            disabled={busy}
            onClick={() =>
              setPending({
                title: `Revoke key ${key.id}`,
                confirm: 'Revoke for good',
                says: (
                  <p>
                    Every instance refuses the key within 5 seconds, for good: a revoked key cannot be
                    restored. Its usage stays readable.
                  </p>
                ),
                act: () => admin.revokeKey(key.id),
              })
            }
          >
            Revoke
          </button>
        )}
      </div>
      {pending && (
        <Confirm
          title={pending.title}
          confirm={pending.confirm}
          onConfirm={act}
          onCancel={() => setPending(null)}
        >
          {pending.says}
        </Confirm>
      )}
    </section>
  );
}

/** The update has a field (the admin contract takes none without one). */
const changesSomething = (change: Partial<AdminKeyUpdate>): change is AdminKeyUpdate =>
  Object.keys(change).length > 0;

/** The limits an enterprise key is given in the form, or none when a number is missing. */
const limitsOf = (perMinute: string, perDay: string) =>
  perMinute && perDay ? { perMinute: Number(perMinute), perDay: Number(perDay) } : undefined;

function ChangeForm(props: {
  apiKey: AdminKey;
  busy: boolean;
  ask: (change: AdminKeyUpdate, says: ComponentChildren) => void;
}) {
  const { apiKey: key } = props;
  const [values, setValues] = useState<KeyFieldValues>({
    plan: key.plan,
    perMinute: String(key.limits.perMinute),
    perDay: String(key.limits.perDay),
    label: key.label ?? '',
    customerId: key.customerId ?? '',
  });
  const { plan, perMinute, perDay, label, customerId } = values;
  const limits = plan === 'enterprise' ? limitsOf(perMinute, perDay) : undefined;
  const change: Partial<AdminKeyUpdate> = {
    ...(plan !== key.plan && { plan }),
    ...(limits &&
      (plan !== key.plan ||
        limits.perMinute !== key.limits.perMinute ||
        limits.perDay !== key.limits.perDay) && {
        plan,
        limits,
      }),
    ...(edited(label, key.label) && { label: label.trim() || null }),
    ...(edited(customerId, key.customerId) && { customerId: customerId.trim() || null }),
  };
  const lines = [
    change.plan !== undefined &&
      change.plan !== key.plan &&
      `Plan: ${key.plan} → ${change.plan}${change.plan === 'enterprise' ? '' : ' (its own limits)'}`,
    change.limits && `Limits: ${limitsText(key)} → ${limitsText({ limits: change.limits })}`,
    change.label !== undefined && `Label: ${key.label ?? 'none'} → ${change.label ?? 'none'}`,
    change.customerId !== undefined &&
      `Customer: ${key.customerId ?? 'none'} → ${change.customerId ?? 'none'}`,
  ].filter(Boolean);
  return (
    <form
      class="change"
      onSubmit={(event) => {
        event.preventDefault();
        if (!changesSomething(change)) return;
        props.ask(
          change,
          <>
            <ul>
              {lines.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
            <p>{inForce}</p>
          </>,
        );
      }}
    >
      <h3>Plan, limits, label, customer</h3>
      <KeyFields values={values} onChange={(change) => setValues({ ...values, ...change })} />
      <button type="submit" disabled={props.busy || lines.length === 0}>
        Change…
      </button>
    </form>
  );
}

/** The grace periods people pick most (a deploy, a day's rollout, a week's), filled in by one press. */
const gracePresets = [
  ['none', 0],
  ['1 hour', 3_600],
  ['24 hours', 86_400],
  ['7 days', 604_800],
] as const;

function RotateForm(props: {
  keyId: string;
  busy: boolean;
  ask: (grace: number, says: ComponentChildren) => void;
}) {
  const [grace, setGrace] = useState('0');
  return (
    <form
      class="rotate"
      onSubmit={(event) => {
        event.preventDefault();
        const seconds = Number(grace);
        props.ask(
          seconds,
          <p>
            A new secret replaces the current one, shown once on this page.{' '}
            {seconds === 0
              ? 'The current secret stops working now.'
              : `The current secret keeps working ${count(seconds)} seconds more (until ${time(new Date(Date.now() + seconds * 1000).toISOString())}).`}
          </p>,
        );
      }}
    >
      <label>
        Grace period (seconds)
        <input
          type="number"
          min={adminLimits.gracePeriodSeconds.minimum}
          max={adminLimits.gracePeriodSeconds.maximum}
          required
          value={grace}
          onInput={(event) => setGrace(event.currentTarget.value)}
        />
      </label>
      <fieldset class="presets">
        <legend>Grace presets</legend>
        {gracePresets.map(([name, seconds]) => (
          <button
            key={name}
            type="button"
            aria-pressed={grace === String(seconds)}
            onClick={() => setGrace(String(seconds))}
          >
            {name}
          </button>
        ))}
      </fieldset>
      <button type="submit" disabled={props.busy}>
        Rotate…
      </button>
    </form>
  );
}

/** An instant as the admin API writes it, or undefined when `text` is not one (ISO 8601 with its zone). */
const instant = (text: string) =>
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text) &&
  !Number.isNaN(Date.parse(text))
    ? new Date(text).toISOString()
    : undefined;

/** The key's expiry: a new one (ISO 8601, as every date here), or none. */
function ExpiryForm(props: {
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
