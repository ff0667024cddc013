// The keys list's filters (plan, customer, state, order) as the address keeps them and as the admin API's
// query reads them, and their form: a filtered list can be shared and reloaded.
import type { ListKeysQuery } from '@animal-store/client/admin';
import { useState } from 'preact/hooks';
import { plans } from '../format.js';
import { go, keysHref } from '../route.js';
import { PlanSelect } from './key-fields.js';

type KeyState = NonNullable<ListKeysQuery['state']>;
/** The admin API's key states, in the order the filter offers them, each as a support desk says it. */
const stateNames: Record<KeyState, string> = {
  active: 'active',
  banned: 'banned now',
  disabled: 'disabled',
  expired: 'expired',
  revoked: 'revoked',
};
const states = Object.keys(stateNames) as KeyState[];

/** The address's filters as the admin API's query (what it does not know is left out). */
export function filtersOf(query: URLSearchParams): ListKeysQuery {
  const plan = plans.find((name) => name === query.get('plan'));
  const customerId = query.get('customerId') || undefined;
  const revoked = query.get('revoked');
  const state = states.find((name) => name === query.get('state'));
  const q = query.get('q') || undefined;
  // Newest first unless the address asks otherwise: the key a support call is about is usually a new one.
  const order = query.get('order') === 'oldest' ? 'oldest' : 'newest';
  return {
    ...(plan && { plan }),
    ...(customerId && { customerId }),
    ...((revoked === 'true' || revoked === 'false') && { revoked: revoked === 'true' }),
    ...(state && { state }),
    ...(q && { q }),
    order,
  };
}

/** The address of the list with `filters`, each kept as the admin API names it. */
export function listHref(filters: Record<string, string | number | boolean | undefined>) {
  const next = new URLSearchParams();
  for (const [name, value] of Object.entries(filters))
    if (value !== undefined && value !== '') next.set(name, String(value));
  return keysHref(next);
}

/** The filter form; the address keeps what it applies, so a filtered list can be shared. */
export function Filters({ filters }: { filters: ListKeysQuery }) {
  const [plan, setPlan] = useState<string>(filters.plan ?? '');
  const [customerId, setCustomerId] = useState(filters.customerId ?? '');
  // An address from before the state filter may still say revoked=true|false: shown as that state.
  const [state, setState] = useState<string>(
    filters.state ?? (filters.revoked === undefined ? '' : filters.revoked ? 'revoked' : 'active'),
  );
  const [order, setOrder] = useState<string>(filters.order === 'oldest' ? 'oldest' : '');
  const apply = (event: Event) => {
    event.preventDefault();
    go(listHref({ plan, customerId: customerId.trim(), state, order, q: filters.q }));
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
        <select name="state" value={state} onChange={(event) => setState(event.currentTarget.value)}>
          <option value="">any</option>
          {states.map((name) => (
            <option key={name} value={name}>
              {stateNames[name]}
            </option>
          ))}
        </select>
      </label>
      <label>
        Order
        <select name="order" value={order} onChange={(event) => setOrder(event.currentTarget.value)}>
          <option value="">newest first</option>
          <option value="oldest">oldest first</option>
        </select>
      </label>
      <button type="submit">Filter</button>
    </form>
  );
}
