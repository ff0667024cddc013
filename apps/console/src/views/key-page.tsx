// A key's page: what the key is (plan, limits, label, customer, created, last use, its state, expiry and a
// rotation's grace), its ban and
// running windows refreshed every few seconds, its daily usage over a chosen range as a chart and a table,
// the actions on it (key-actions.tsx), and its history (audit.tsx). After an action, the page reads
// the key again, and its history.
import type { AdminKey, KeyUsage } from '@animal-store/client/admin';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { addDays, count, keyState, limitsText, time, utcDay } from '../format.js';
import { NoticeLine, useCall, useSigned } from '../ui.js';
import { KeyHistory } from './audit.js';
import { KeyActions } from './key-actions.js';
import { type Range, UsageChart } from './usage-chart.js';

/** How often the running windows and today's totals are read again. */
const refreshMs = 5_000;

/** The 30 UTC days up to the one `now` is in. */
function lastDays(now: Date): Range {
  const today = utcDay(now);
  return { from: addDays(today, -29), to: today };
}

export function KeyPage({ keyId }: { keyId: string }) {
  const { admin } = useSigned();
  const { busy, notice, run } = useCall();
  const [key, setKey] = useState<AdminKey | null>(null);
  const [usage, setUsage] = useState<KeyUsage | null>(null);
  const [readAt, setReadAt] = useState<string | null>(null);
  // A range a person chose, or none: the last 30 UTC days, up to today as of each read, so that a page left
  // open past UTC midnight moves on to the new day.
  const [chosen, setRange] = useState<Range | null>(null);
  const range = chosen ?? lastDays(new Date());

  const readUsage = useCallback(
    () =>
      run(() => admin.getKeyUsage(keyId, chosen ?? lastDays(new Date()))).then((answer) => {
        if (!answer) return;
        setUsage(answer);
        setReadAt(new Date().toISOString());
      }),
    [admin, run, keyId, chosen],
  );
  const readKey = useCallback(
    () => run(() => admin.getKey(keyId)).then((answer) => setKey(answer ?? null)),
    [admin, run, keyId],
  );
  useEffect(() => {
    void readKey();
  }, [readKey]);
  useEffect(() => {
    if (!key) return;
    void readUsage();
    const timer = setInterval(readUsage, refreshMs);
    return () => clearInterval(timer);
  }, [key, readUsage]);

  // Before the key is read, and when it cannot be: the view still has its heading, and says which.
  if (!key)
    return (
      <article aria-labelledby="key-title">
        <h1 id="key-title">Key {keyId}</h1>
        {busy && !notice ? <p role="status">Loading the key…</p> : <NoticeLine notice={notice} />}
      </article>
    );
  return (
    <article aria-labelledby="key-title">
      <h1 id="key-title">Key {key.id}</h1>
      <dl class="facts">
        <dt>Plan</dt>
        <dd>{key.plan}</dd>
        <dt>Limits</dt>
        <dd>{limitsText(key)}</dd>
        <dt>Label</dt>
        <dd>{key.label ?? '—'}</dd>
        <dt>Customer</dt>
        <dd>{key.customerId ?? '—'}</dd>
        <dt>Created</dt>
        <dd>{time(key.createdAt)}</dd>
        <dt>Last used</dt>
        <dd>{time(key.lastUsedAt, 'never')}</dd>
        <dt>State</dt>
        <dd data-testid="state">
          {key.revokedAt !== null
            ? `revoked ${time(key.revokedAt)}`
            : key.disabledAt !== null
              ? `disabled since ${time(key.disabledAt)}`
              : keyState(key)}
        </dd>
        <dt>Expires</dt>
        <dd data-testid="expires">{time(key.expiresAt, 'never')}</dd>
        <dt>Previous secret</dt>
        <dd data-testid="previous-secret">
          {key.previousSecretValidUntil === null
            ? 'none works'
            : `works until ${time(key.previousSecretValidUntil)}`}
        </dd>
        <dt>Ban</dt>
        <dd data-testid="ban">
          {usage?.bannedUntil ? `banned until ${time(usage.bannedUntil)}` : 'not banned'}
        </dd>
      </dl>
      <NoticeLine notice={notice} />
      {usage && <Windows usage={usage} readAt={readAt} />}
      <UsageChart range={range} onRange={setRange} days={usage?.days ?? null} name={`key-${key.id}`} />
      <KeyActions
        key={key.id}
        apiKey={key}
        bannedUntil={usage?.bannedUntil ?? null}
        usedUp={(usage?.windows ?? []).filter((w) => w.remaining === 0 && w.resetAt)}
        onChanged={readKey}
      />
      <KeyHistory keyId={key.id} changed={key} />
    </article>
  );
}

function Windows({ usage, readAt }: { usage: KeyUsage; readAt: string | null }) {
  return (
    <section aria-labelledby="windows-title">
      <h2 id="windows-title">Running windows</h2>
      <table>
        <caption>
          Read {time(readAt)}; read again every {refreshMs / 1000} seconds. A window starts at the key's first
          request in it: its day is 24 hours from then, not a UTC day as in the daily usage below.
        </caption>
        <thead>
          <tr>
            <th scope="col">Window</th>
            <th scope="col">Limit</th>
            <th scope="col">Used</th>
            <th scope="col">Reserved</th>
            <th scope="col">Remaining</th>
            <th scope="col">Resets</th>
          </tr>
        </thead>
        <tbody>
          {usage.windows.map((window) => (
            <tr key={window.name} data-window={window.name}>
              <th scope="row">{window.name}</th>
              <td>{count(window.limit)}</td>
              <td>{count(window.used)}</td>
              <td>{count(window.reserved ?? 0)}</td>
              <td>{count(window.remaining)}</td>
              <td>{time(window.resetAt, 'no window running')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
