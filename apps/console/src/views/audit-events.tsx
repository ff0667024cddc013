// The audit trail of the admin API (listAuditEvents) as a table, newest first, older events a page at a
// time: who (the admin token's name), when, what changed in words, the request id to find its log lines.
// Shown on a key's page and as a view of its own (audit.tsx).
import type { AuditEvent, AuditQuery } from '@animal-store/client/admin';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { auditText, time } from '../format.js';
import { keyHref } from '../route.js';
import { NoticeLine, useCall, useLatest, useSigned } from '../ui.js';

const pageSize = 20;

/**
 * The events `filter` names, with each one's key unless `onKeyPage`; `changed`: anything that differs after
 * a change made on the page.
 */
export function AuditEvents(props: {
  filter: Omit<AuditQuery, 'cursor' | 'limit'>;
  changed?: unknown;
  empty: string;
  onKeyPage?: boolean;
}) {
  const { admin } = useSigned();
  const { busy, notice, run } = useCall();
  const [events, setEvents] = useState<AuditEvent[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const filterKey = JSON.stringify(props.filter);
  const showKey = !props.onKeyPage;

  const begin = useLatest();
  const read = useCallback(
    async (cursor?: string) => {
      const latest = begin();
      const filter = JSON.parse(filterKey) as AuditQuery;
      const page = await run(() =>
        admin.listAuditEvents({ ...filter, limit: pageSize, ...(cursor !== undefined && { cursor }) }),
      );
      if (!page || !latest()) return;
      setEvents((shown) => (cursor === undefined ? page.events : [...(shown ?? []), ...page.events]));
      setNext(page.nextCursor);
    },
    [admin, run, filterKey, begin],
  );
  useEffect(() => {
    void props.changed;
    void read();
  }, [read, props.changed]);

  return (
    <>
      <NoticeLine notice={notice} />
      {events === null ? (
        busy && <p role="status">Loading the changes…</p>
      ) : events.length === 0 ? (
        <p>{props.empty}</p>
      ) : (
        <table>
          <caption>
            Changes made through the admin API, newest first, by the name of the admin token that made them.
          </caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              {showKey && <th scope="col">Key</th>}
              <th scope="col">What</th>
              <th scope="col">Request id</th>
            </tr>
          </thead>
          <tbody>
            {events.map((event) => (
              <tr key={event.id} data-operation={event.operation}>
                <td>{time(event.at)}</td>
                <td class="text">{event.actor.name}</td>
                {showKey && (
                  <td>
                    <a href={keyHref(event.keyId)}>{event.keyId}</a>
                  </td>
                )}
                <td class="text">{auditText(event)}</td>
                <td class="text">{event.requestId}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next !== null && (
        <button type="button" disabled={busy} onClick={() => void read(next)}>
          Older changes
        </button>
      )}
    </>
  );
}
