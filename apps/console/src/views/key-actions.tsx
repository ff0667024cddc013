// What can be done to a key, each behind a confirmation that says what will happen: change its plan,
// limits, label or customer; set or clear its expiry; disable or enable it; rotate its secret with a grace
// period; revoke it; end its ban. The answer (or the Error body's message) is shown where it was asked for.
import type { AdminKey, KeyUsage, RotatedAdminKey } from '@animal-store/client/admin';
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { time } from '../format.js';
import { Confirm, NoticeLine, useCall, useSigned } from '../ui.js';
import { ExpiryForm } from './expiry-form.js';
import { ChangeForm, RotatedNotice, RotateForm } from './key-forms.js';

type Pending = { title: string; confirm: string; says: ComponentChildren; act: () => Promise<unknown> };

/** A running window the key has used up (remaining 0), as the usage read says it. */
type UsedUp = KeyUsage['windows'][number];

type Admin = ReturnType<typeof useSigned>['admin'];

/** Disable an enabled key, or enable a disabled one. */
const toggleOf = (key: AdminKey, admin: Admin): Pending =>
  key.disabledAt === null
    ? {
        title: `Disable key ${key.id}`,
        confirm: 'Disable',
        says: (
          <p>
            Every instance refuses the key within 5 seconds (401, code key_disabled) until it is enabled
            again. Its plan, windows and usage are kept.
          </p>
        ),
        act: () => admin.updateKey(key.id, { disabled: true }),
      }
    : {
        title: `Enable key ${key.id}`,
        confirm: 'Enable',
        says: <p>The key opens the API again within 5 seconds on every instance.</p>,
        act: () => admin.updateKey(key.id, { disabled: false }),
      };

/**
 * End the key's ban, and start over the windows it used up: else those still refuse it (429) until they
 * end, and a key that keeps sending meanwhile is banned again (26 s after an unban, once), which an unban
 * that promised it "429 until" the minute's end did not say. One action, that does what it says.
 */
const unbanOf = (
  key: AdminKey,
  admin: Admin,
  { bannedUntil, usedUp }: { bannedUntil: string | null; usedUp: UsedUp[] },
): Pending => ({
  title: `Unban key ${key.id}`,
  confirm: 'Unban',
  says: (
    <p>
      The key's ban ends now (it would end {time(bannedUntil)})
      {usedUp.length === 0
        ? ''
        : `, and its ${usedUp.map((w) => w.name).join(' and ')} ${usedUp.length > 1 ? 'start' : 'starts'} over with its whole limit`}
      : its requests are answered again within 5 seconds on every instance.
      {usedUp.length === 0 ? '' : ' What it used before still counts in its usage per day.'}
    </p>
  ),
  act: () =>
    (usedUp.length === 0
      ? admin.unbanKey(key.id)
      : admin.unbanKey(key.id, { reset: usedUp.map((w) => w.name) })
    ).then(() => true),
});

/** Set the key's expiry, or clear it (`expiresAt` null). */
const expiryOf = (
  key: AdminKey,
  admin: Admin,
  expiresAt: string | null,
  says: ComponentChildren,
): Pending => ({
  title: expiresAt === null ? `Clear key ${key.id}'s expiry` : `Set key ${key.id}'s expiry`,
  confirm: expiresAt === null ? 'Clear the expiry' : 'Set the expiry',
  says,
  act: () => admin.updateKey(key.id, { expiresAt }),
});

/** Revoke the key for good. */
const revokeOf = (key: AdminKey, admin: Admin): Pending => ({
  title: `Revoke key ${key.id}`,
  confirm: 'Revoke for good',
  says: (
    <p>
      Every instance refuses the key within 5 seconds, for good: a revoked key cannot be restored. Its usage
      stays readable.
    </p>
  ),
  act: () => admin.revokeKey(key.id),
});

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
      <NoticeLine notice={notice} takesFocus />
      {rotated && <RotatedNotice rotated={rotated} />}
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
          ask={(expiresAt, says) => setPending(expiryOf(key, admin, expiresAt, says))}
        />
      )}
      <div class="action-row">
        {!revoked && (
          <button type="button" disabled={busy} onClick={() => setPending(toggleOf(key, admin))}>
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
          <button type="button" disabled={busy} onClick={() => setPending(unbanOf(key, admin, props))}>
            Unban
          </button>
        )}
        {!revoked && (
          <button
            type="button"
            class="danger"
            disabled={busy}
            onClick={() => setPending(revokeOf(key, admin))}
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
