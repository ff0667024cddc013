// A key's page: what the key is (plan, limits, label, customer, created, last use, its state, expiry and a
// rotation's grace), its ban and
// running windows refreshed every few seconds, its daily usage over a chosen range as a chart and a table,
// the actions on it (key-actions.tsx), and its history (audit.tsx). After an action, the page reads
// the key again, and its history.
import type { AdminKey, KeyUsage } from '@animal-store/client/admin';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { addDays, count, keyState, limitsText, time, utcDay } from '../format.js';
import { NoticeLine, useCall, useLatest, useLoad, useSigned } from '../ui.js';
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
  const { busy, notice, run, outage } = useCall();
  const [key, setKey] = useState<AdminKey | null>(null);
  const [usage, setUsage] = useState<KeyUsage | null>(null);
  const [readAt, setReadAt] = useState<string | null>(null);
  // A range a person chose, or none: the last 30 UTC days, up to today as of each read, so that a page left
  // open past UTC midnight moves on to the new day.
  const [chosen, setRange] = useState<Range | null>(null);
  const range = chosen ?? lastDays(new Date());

  const [beginUsage, beginKey] = [useLatest(), useLatest()];
  const readUsage = useCallback(() => {
    const latest = beginUsage();
    return run(() => admin.getKeyUsage(keyId, chosen ?? lastDays(new Date()))).then((answer) => {
      if (!answer || !latest()) return;
      setUsage(answer);
      setReadAt(new Date().toISOString());
    });
  }, [admin, run, keyId, chosen, beginUsage]);
  const readKey = useCallback(() => {
    const latest = beginKey();
    return run(() => admin.getKey(keyId)).then((answer) => {
      if (answer && latest()) setKey(answer); // a read that failed keeps what was shown, beside its notice
      return answer !== undefined;
    });
  }, [admin, run, keyId, beginKey]);
  useLoad(readKey, outage, [readKey]);
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

/**
 * What the table shows of each running window, a row each, the windows side by side (a third window is a
 * column more): so it fits a phone's width without breaking a word or a number.
 */
const windowMeasures: [string, (window: KeyUsage['windows'][number]) => string][] = [
  ['Limit', (w) => count(w.limit)],
  ['Used', (w) => count(w.used)],
  ['Reserved', (w) => count(w.reserved ?? 0)],
  ['Remaining', (w) => count(w.remaining)],
  ['Resets', (w) => time(w.resetAt, 'no window running')],
];

function Windows({ usage, readAt }: { usage: KeyUsage; readAt: string | null }) {
  return (
    <section aria-labelledby="windows-title">
      <h2 id="windows-title">Running windows</h2>
      <table class="windows">
        <caption>
          Read {time(readAt)}; read again every {refreshMs / 1000} seconds. A window starts at the key's first
          request in it: its day is 24 hours from then, not a UTC day as in the daily usage below.
        </caption>
        <thead>
          <tr>
            <td />
            {usage.windows.map((window) => (
              <th key={window.name} scope="col">
                {window.name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {windowMeasures.map(([measure, shown]) => (
            <tr key={measure} data-measure={measure}>
              <th scope="row">{measure}</th>
              {usage.windows.map((window) => (
                <td key={window.name} data-window={window.name}>
                  {shown(window)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
