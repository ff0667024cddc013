// listKeys' query on both engines: its filters (plan, customer, revocation, and the search `q`: the start
// of an id, or a part of a label or customer id, the case of letters ignored) as one condition, each engine
// naming its parameters; its order (oldest or newest first) as a position and a direction. The search is
// SQL's LIKE with the text's own `%`, `_` and `\` made plain; the text is lowered here, the columns by the
// engine (SQLite's lower() folds ASCII letters only, PostgreSQL's every letter).
import type { KeyFilter, KeyQuery } from './store.js';

/** The values of the filters, by the names `keyFilterClause` asks the engine to place. */
export function keyFilterValues(filter: KeyFilter) {
  const plain = filter.search?.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
  return {
    plan: filter.plan ?? null,
    customerId: filter.customerId ?? null,
    revoked: filter.revoked ?? null,
    contains: plain === undefined ? null : `%${plain}%`,
    prefix: plain === undefined ? null : `${plain}%`,
  };
}
export type KeyFilterName = keyof ReturnType<typeof keyFilterValues>;
/** Every filter's name, in one order (an engine with numbered parameters numbers them in it). */
export const keyFilterNames: readonly KeyFilterName[] = [
  'plan',
  'customerId',
  'revoked',
  'contains',
  'prefix',
];

/** The filters as one condition, given how the engine names each value (typed where it must be). */
export function keyFilterClause(at: (name: KeyFilterName) => string): string {
  const [plan, customer, revoked, contains, prefix] = keyFilterNames.map(at);
  return `(${plan} IS NULL OR plan = ${plan})
    AND (${customer} IS NULL OR customer_id = ${customer})
    AND (${revoked} IS NULL OR (revoked_at IS NOT NULL) = ${revoked})
    AND (${contains} IS NULL OR id LIKE ${prefix} ESCAPE '\\' OR lower(label) LIKE ${contains} ESCAPE '\\'
      OR lower(customer_id) LIKE ${contains} ESCAPE '\\')`;
}

/** Past every key (no key is created in the year 9999): where a newest-first list starts. */
const end = { createdAt: '9999-12-31T23:59:59.999Z', id: '' };

/**
 * A page's position and direction: after `after` in creation order (oldest first, from the start), or
 * before it (newest first, from the end), and the ORDER BY that goes with it.
 */
export function keyOrder(query: KeyQuery) {
  const newest = query.order === 'newest';
  return {
    after: query.after ?? (newest ? end : { createdAt: '', id: '' }),
    beyond: newest ? '<' : '>',
    orderBy: newest ? 'created_at DESC, id DESC' : 'created_at, id',
  };
}
