// The audit trail of the admin API (its table: audit-events.tsx). On a key's page, that key's history (read
// again after each change made there); as a view of its own (`#/audit`), every key's, filtered by a part of
// a token name, operation, key and UTC days, the filters in the address.
import { type AuditQuery, adminLimits } from '@animal-store/client/admin';
import { addDays, auditOperations, isUtcDay } from '../format.js';
import { auditHref, go } from '../route.js';
import { AuditEvents } from './audit-events.js';

/** A key's history, on its page. */
export function KeyHistory({ keyId, changed }: { keyId: string; changed: unknown }) {
  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
      <AuditEvents
        filter={{ keyId }}
        onKeyPage
        changed={changed}
        empty="No change made through the admin API is recorded for this key."
      />
    </section>
  );
}

/** A UTC day as the address keeps it (`YYYY-MM-DD`), or undefined for anything else. */
function dayOf(text: string | null): string | undefined {
  const day = text?.trim() ?? '';
  return isUtcDay(day) ? day : undefined;
}

/** The address's filters as the admin API's query (what it does not know is left out). */
function filtersOf(query: URLSearchParams): Omit<AuditQuery, 'cursor' | 'limit'> {
  const actor = query.get('actor')?.trim() || undefined;
  const operation = auditOperations.find((name) => name === query.get('operation'));
  const keyId = query.get('keyId')?.trim() || undefined;
  // From the start of the first UTC day to the end of the last, both included.
  const from = dayOf(query.get('from'));
  const to = dayOf(query.get('to'));
  return {
    ...(actor && { actor }),
    ...(operation && { operation }),
    ...(keyId && { keyId }),
    ...(from && { since: `${from}T00:00:00.000Z` }),
    ...(to && { until: `${addDays(to, 1)}T00:00:00.000Z` }),
  };
}

const filterNames = ['actor', 'operation', 'keyId', 'from', 'to'];

/** Every key's changes, filtered by who, what, which key and which days. */
export function AuditView({ query }: { query: URLSearchParams }) {
  const filter = filtersOf(query);
  const apply = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const next = new URLSearchParams();
    for (const name of filterNames) {
      const value = String(form.get(name) ?? '').trim();
      if (value) next.set(name, value);
    }
    go(auditHref(next));
  };
  const day = (name: 'from' | 'to', label: string) => (
    <label>
      {label}
      <input
        name={name}
        defaultValue={dayOf(query.get(name)) ?? ''}
        placeholder="YYYY-MM-DD"
        pattern="\d{4}-\d{2}-\d{2}"
        title="a UTC day, YYYY-MM-DD"
        inputMode="numeric"
        spellcheck={false}
        autoComplete="off"
      />
    </label>
  );
  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">Audit</h1>
      <search>
        <form class="filters" onSubmit={apply} key={query.toString()}>
          <label>
            Who (a part of a token name)
            <input
              name="actor"
              defaultValue={filter.actor ?? ''}
              maxLength={adminLimits.auditActor.maxLength}
              autoComplete="off"
            />
          </label>
          <label>
            What
            <select name="operation">
              <option value="">every change</option>
              {auditOperations.map((name) => (
                <option key={name} value={name} selected={name === filter.operation}>
                  {name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Key id
            <input
              name="keyId"
              defaultValue={filter.keyId ?? ''}
              pattern={adminLimits.keyId.pattern.slice(1, -1)}
              maxLength={adminLimits.keyId.length}
              autoComplete="off"
              title="a key id: 12 characters, 0-9 and a-f"
            />
          </label>
          {day('from', 'From (UTC day)')}
          {day('to', 'To (UTC day)')}
          <button type="submit">Show</button>
        </form>
      </search>
      <AuditEvents filter={filter} empty="No change matches these filters." />
    </section>
  );
}
