// The keys: the admin API's filters (plan, customer, revoked) and its search in the address, cursor paging
// (the cursors of the pages before are kept for Previous), and one box that finds a key: a whole key id
// opens its page, any other text lists the keys whose id starts with it or whose label or customer holds it.
import { type AdminKeyPage, adminLimits } from '@animal-store/client/admin';
import { useState } from 'preact/hooks';
import { count, keyState, limitsText, time } from '../format.js';
import { go, keyHref } from '../route.js';
import { NoticeLine, useCall, useLatest, useLoad, useSigned } from '../ui.js';
import { Filters, filtersOf, listHref } from './key-filters.js';

const pageSize = 25;
const keyId = /^[0-9a-f]{12}$/;

export function KeyList({ query }: { query: URLSearchParams }) {
  const { admin } = useSigned();
  const { busy, notice, run, outage } = useCall();
  const [page, setPage] = useState<AdminKeyPage | null>(null);
  const filters = filtersOf(query);
  const filterKey = JSON.stringify(filters);
  // The page is in the address (its cursor), so a page can be shared and reloaded; the cursors of the pages
  // before it, which Previous goes back to, are this tab's (a page opened from an address goes back to the
  // first). Other filters start at the first page.
  const cursor = query.get('cursor') ?? '';
  const [trail, setTrail] = useState({ filterKey, cursors: [] as string[] });
  const before = trail.filterKey === filterKey ? trail.cursors : [];
  const turn = (to: 'next' | 'previous', next?: string) => {
    const cursors = to === 'next' ? [...before, cursor] : before.slice(0, -1);
    setTrail({ filterKey, cursors });
    go(listHref({ ...filters, cursor: to === 'next' ? next : before.at(-1) }));
  };

  const begin = useLatest();
  useLoad(
    () => {
      const latest = begin();
      return run(() => admin.listKeys({ ...filters, limit: pageSize, ...(cursor && { cursor }) })).then(
        (answer) => {
          if (answer && latest()) setPage(answer);
          return answer !== undefined;
        },
      );
    },
    outage,
    [admin, run, filterKey, cursor],
  );

  const find = (event: Event) => {
    event.preventDefault();
    const text = String(new FormData(event.currentTarget as HTMLFormElement).get('q') ?? '').trim();
    go(keyId.test(text) ? keyHref(text) : listHref({ ...filters, q: text }));
  };

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">Keys</h1>
      <search>
        <form class="search" onSubmit={find} key={filters.q ?? ''}>
          <label>
            Find a key
            <input
              name="q"
              type="search"
              defaultValue={filters.q ?? ''}
              maxLength={adminLimits.search.maxLength}
              placeholder="key id, label or customer"
              spellcheck={false}
            />
          </label>
          <button type="submit">Find</button>
        </form>
      </search>
      <Filters filters={filters} key={filterKey} />
      <NoticeLine notice={notice} />
      {/* New filters or a page: said while it is read, the page before shown meanwhile (marked busy). */}
      {busy && <p role="status">Loading keys…</p>}
      {page && <KeyTable page={page} first={cursor === ''} busy={busy} turn={turn} />}
    </section>
  );
}

const columns = ['Key', 'Plan', 'Limits', 'Label', 'Customer', 'Created', 'Last used', 'State'];

function KeyTable(props: {
  page: AdminKeyPage;
  first: boolean;
  busy: boolean;
  turn: (to: 'next' | 'previous', next?: string) => void;
}) {
  const { page } = props;
  const refused = new Map(page.limited.map((key) => [key.id, key]));
  const near = new Map(page.nearLimit.map((key) => [key.id, key]));
  return (
    <>
      <table aria-busy={props.busy}>
        <caption>
          {page.total === 0
            ? 'No key matches.'
            : `${count(page.total)} ${page.total === 1 ? 'key' : 'keys'} in all, ${count(page.keys.length)} on this page`}
        </caption>
        <thead>
          <tr>
            {columns.map((name) => (
              <th key={name} scope="col">
                {name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {page.keys.map((key) => (
            <tr key={key.id} class="key-row">
              <th scope="row">
                <a href={keyHref(key.id)}>{key.id}</a>
              </th>
              <td>{key.plan}</td>
              <td>{limitsText(key)}</td>
              <td class="text">{key.label ?? '—'}</td>
              <td class="text">{key.customerId ?? '—'}</td>
              <td>{time(key.createdAt)}</td>
              <td>{time(key.lastUsedAt, 'never')}</td>
              <td>
                {[keyState(key), refusal(refused.get(key.id)), nearness(near.get(key.id))]
                  .filter(Boolean)
                  .join('; ')}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <nav class="pages" aria-label="Pages">
        <button type="button" disabled={props.first || props.busy} onClick={() => props.turn('previous')}>
          Previous page
        </button>
        <button
          type="button"
          disabled={page.nextCursor === null || props.busy}
          onClick={() => page.nextCursor !== null && props.turn('next', page.nextCursor)}
        >
          Next page
        </button>
      </nav>
    </>
  );
}

/** Which of a key's windows are nearly used up, in words (listKeys' `nearLimit`), or nothing. */
function nearness(key: AdminKeyPage['nearLimit'][number] | undefined): string {
  return key ? key.windows.map((w) => `${w.name} ${w.percentUsed} % used`).join(', ') : '';
}

/** Why a key is refused now, in words (listKeys' `limited`), or nothing. */
function refusal(key: AdminKeyPage['limited'][number] | undefined): string {
  if (!key) return '';
  if (key.bannedUntil) return `banned until ${time(key.bannedUntil)}`;
  return `${key.usedUp.join(' and ')} used up`;
}
