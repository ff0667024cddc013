// The keys: the admin API's filters (plan, customer, revoked) and its search in the address, cursor paging
// (the cursors of the pages before are kept for Previous), and one box that finds a key: a whole key id
// opens its page, any other text lists the keys whose id starts with it or whose label or customer holds it.
import { type AdminKeyPage, adminLimits, type ListKeysQuery } from '@animal-store/client/admin';
import { useEffect, useState } from 'preact/hooks';
import { count, keyState, limitsText, plans, time } from '../format.js';
import { go, keyHref, keysHref } from '../route.js';
import { NoticeLine, useCall, useSigned } from '../ui.js';
import { PlanSelect } from './key-fields.js';

const pageSize = 25;
const keyId = /^[0-9a-f]{12}$/;

/** The address's filters as the admin API's query (what it does not know is left out). */
function filtersOf(query: URLSearchParams): ListKeysQuery {
  const plan = plans.find((name) => name === query.get('plan'));
  const customerId = query.get('customerId') || undefined;
  const revoked = query.get('revoked');
  const q = query.get('q') || undefined;
  const order = query.get('order') === 'newest' ? 'newest' : undefined;
  return {
    ...(plan && { plan }),
    ...(customerId && { customerId }),
    ...((revoked === 'true' || revoked === 'false') && { revoked: revoked === 'true' }),
    ...(q && { q }),
    ...(order && { order }),
  };
}

/** The address of the list with `filters`, each kept as the admin API names it. */
function listHref(filters: Record<string, string | number | boolean | undefined>) {
  const next = new URLSearchParams();
  for (const [name, value] of Object.entries(filters))
    if (value !== undefined && value !== '') next.set(name, String(value));
  return keysHref(next);
}

export function KeyList({ query }: { query: URLSearchParams }) {
  const { admin } = useSigned();
  const { busy, notice, run } = useCall();
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

  useEffect(() => {
    void run(() => admin.listKeys({ ...filters, limit: pageSize, ...(cursor && { cursor }) })).then(
      (answer) => answer && setPage(answer),
    );
  }, [admin, run, filterKey, cursor]);

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
      {page && <KeyTable page={page} first={cursor === ''} busy={busy} turn={turn} />}
    </section>
  );
}

function KeyTable(props: {
  page: AdminKeyPage;
  first: boolean;
  busy: boolean;
  turn: (to: 'next' | 'previous', next?: string) => void;
}) {
  const { page } = props;
  const refused = new Map(page.limited.map((key) => [key.id, key]));
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
            <th scope="col">Key</th>
            <th scope="col">Plan</th>
            <th scope="col">Limits</th>
            <th scope="col">Label</th>
            <th scope="col">Customer</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">State</th>
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
              <td>{[keyState(key), refusal(refused.get(key.id))].filter(Boolean).join('; ')}</td>
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
          onClick={() => {
            const next = page.nextCursor;
            if (next !== null) props.turn('next', next);
          }}
        >
          Next page
        </button>
      </nav>
    </>
  );
}

/** Why a key is refused now, in words (listKeys' `limited`), or nothing. */
function refusal(key: AdminKeyPage['limited'][number] | undefined): string {
  if (!key) return '';
  if (key.bannedUntil) return `banned until ${time(key.bannedUntil)}`;
  return `${key.usedUp.join(' and ')} used up`;
}

/** The filter form; the address keeps what it applies, so a filtered list can be shared. */
function Filters({ filters }: { filters: ListKeysQuery }) {
  const [plan, setPlan] = useState<string>(filters.plan ?? '');
  const [customerId, setCustomerId] = useState(filters.customerId ?? '');
  const [revoked, setRevoked] = useState(filters.revoked === undefined ? '' : String(filters.revoked));
  const [order, setOrder] = useState<string>(filters.order ?? '');
  const apply = (event: Event) => {
    event.preventDefault();
    go(listHref({ plan, customerId: customerId.trim(), revoked, order, q: filters.q }));
  };
  return (
    <form class="filters" onSubmit={apply}>
      <PlanSelect value={plan} onChange={setPlan} any="any" />
      <label>
        Customer
        <input
          name="customerId"
          value={customerId}
          spellcheck={false}
          onInput={(event) => setCustomerId(event.currentTarget.value)}
        />
      </label>
      <label>
        State
        <select name="revoked" value={revoked} onChange={(event) => setRevoked(event.currentTarget.value)}>
          <option value="">active and revoked</option>
          <option value="false">active</option>
          <option value="true">revoked</option>
        </select>
      </label>
      <label>
        Order
        <select name="order" value={order} onChange={(event) => setOrder(event.currentTarget.value)}>
          <option value="">oldest first</option>
          <option value="newest">newest first</option>
        </select>
      </label>
      <button type="submit">Filter</button>
    </form>
  );
}
