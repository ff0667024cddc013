// The forms behind a key's actions that take input: its changes (plan, limits, label, customer) and a
// rotation's grace, with the new secret it shows once (the expiry's form: expiry-form.tsx). Each hands its
// change and what it will do to `ask` (KeyActions, key-actions.tsx), which confirms it; nothing is sent before.
import {
  type AdminKey,
  type AdminKeyUpdate,
  adminLimits,
  type RotatedAdminKey,
} from '@animal-store/client/admin';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { count, limitsText, time } from '../format.js';
import { SecretOnce } from '../ui.js';
import { KeyFields, type KeyFieldValues } from './key-fields.js';

const inForce =
  'In force on every instance within 5 seconds; what the key used in its running minute and day still counts.';

/**
 * Whether a text field was edited into a new value: not when it is as stored (a label stored with spaces
 * around it is not offered trimmed to a person who touched nothing), nor when only spaces around it changed.
 */
const edited = (value: string, stored: string | null) =>
  value !== (stored ?? '') && value.trim() !== (stored ?? '').trim();

/** The update has a field (the admin contract takes none without one). */
const changesSomething = (change: Partial<AdminKeyUpdate>): change is AdminKeyUpdate =>
  Object.keys(change).length > 0;

/** The limits an enterprise key is given in the form, or none when a number is missing. */
const limitsOf = (perMinute: string, perDay: string) =>
  perMinute && perDay ? { perMinute: Number(perMinute), perDay: Number(perDay) } : undefined;

export function ChangeForm(props: {
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

export function RotateForm(props: {
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

/** A rotation's new secret, shown once, and until when the previous one works. */
export function RotatedNotice({ rotated }: { rotated: RotatedAdminKey }) {
  return (
    <div class="rotated">
      <SecretOnce label={`New secret of key ${rotated.id}`} secret={rotated.secret} />
      <p>
        The previous secret works until {time(rotated.previousSecretValidUntil, 'now: it no longer works')}.
      </p>
    </div>
  );
}
