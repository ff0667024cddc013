// listKeys' query on both engines: its filters (plan, customer, revocation, state, and the search `q`: the
// start of an id, or words of a label or customer id) as one condition, each engine naming its parameters; its
// order (oldest or newest first) as a position and a direction. The search matches the key's search text
// (api_keys.search_text: its label and customer id as searchFold makes them, written with the key), so the
// query and what it is matched against are folded by one rule on every engine, never by a database's
// lower() (SQLite's folds ASCII only; PostgreSQL's differs from JavaScript's on Σ and İ). SQL's LIKE with
// the text's own `%`, `_` and `\` made plain. A row written before search_text existed (an older instance
// in a rolling upgrade; the next start fills it) is matched as before, by lower().
import type { KeyFilter, KeyQuery } from './store.js';

/**
 * One rule for what a search finds: Unicode compatibility forms made one (NFKC: ﬁ is fi, a decomposed Ü
 * the composed one), letters lowered without a locale, the final sigma as any sigma (JavaScript lowers a
 * word-final Σ to ς), a dotted capital I as i (it lowers to i and a combining dot), and every run of what is
 * neither letter, mark nor digit (spaces, hyphens, underscores, punctuation) one space, which a search
 * keeps at its ends: "Zoo Atlas" finds "zoo-atlas mobile app", "cus_12_" does not find "cus_123".
 * Written by hand: docs/decisions.md#search-fold
 */
export function searchFold(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replaceAll('ς', 'σ')
    .replaceAll('i\u0307', 'i')
    .replace(/[^\p{L}\p{M}\p{N}]+/gu, ' ');
}

/**
 * A key's search text (api_keys.search_text): its label and its customer id, each folded and between
 * spaces (a search's edge may fall on theirs), one per line (no search holds a line break, so none spans
 * the two).
 */
export const searchText = (label: string | null | undefined, customerId: string | null | undefined) =>
  ` ${searchFold(label ?? '').trim()} \n ${searchFold(customerId ?? '').trim()} `;

/** The keys an older release wrote, without search text (none after the first start of this one). */
export const keysWithoutSearchText = 'SELECT id, label, customer_id FROM api_keys WHERE search_text IS NULL';
export type UnsearchableKey = { id: string; label: string | null; customer_id: string | null };

/** `text` as LIKE matches it literally: its `%`, `_` and `\\` escaped (with ESCAPE '\\'). */
export const plain = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The values of the filters, by the names `keyFilterClause` asks the engine to place. */
export function keyFilterValues(filter: KeyFilter) {
  const search = filter.search;
  // The folded search holds no `%`, `_` or `\` (separators, made spaces). One of separators alone (`!`,
  // `*`) folds to no word: it finds no label or customer id (the pattern '' matches no search text, which
  // always holds its line break), only an id it starts.
  const folded = search === undefined ? undefined : searchFold(search);
  const lowered = search === undefined ? undefined : plain(search.toLowerCase());
  return {
    plan: filter.plan ?? null,
    customerId: filter.customerId ?? null,
    revoked: filter.revoked ?? null,
    state: filter.state ?? null,
    now: new Date().toISOString(),
    // The banned keys' ids, each between commas (ids are hex: no LIKE wildcard in them).
    banned: `,${(filter.banned ?? []).join(',')},`,
    contains: folded === undefined ? null : folded.trim() === '' ? '' : `%${folded}%`,
    prefix: lowered === undefined ? null : `${lowered}%`,
    legacy: lowered === undefined ? null : `%${lowered}%`,
  };
}
export type KeyFilterName = keyof ReturnType<typeof keyFilterValues>;
/** Every filter's name, in one order (an engine with numbered parameters numbers them in it). */
export const keyFilterNames: readonly KeyFilterName[] = [
  'plan',
  'customerId',
  'revoked',
  'state',
  'now',
  'banned',
  'contains',
  'prefix',
  'legacy',
];

/** The filters as one condition, given how the engine names each value (typed where it must be). */
export function keyFilterClause(at: (name: KeyFilterName) => string): string {
  const [plan, customer, revoked, state, now, banned, contains, prefix, legacy] = keyFilterNames.map(at);
  return `(${plan} IS NULL OR plan = ${plan})
    AND (${customer} IS NULL OR customer_id = ${customer})
    AND (${revoked} IS NULL OR (revoked_at IS NOT NULL) = ${revoked})
    AND (${state} IS NULL OR (${state} = 'revoked' AND revoked_at IS NOT NULL)
      OR (revoked_at IS NULL AND ((${state} = 'disabled' AND disabled_at IS NOT NULL)
        OR (${state} = 'expired' AND expires_at <= ${now})
        OR (${state} = 'active' AND disabled_at IS NULL AND (expires_at IS NULL OR expires_at > ${now}))
        OR (${state} = 'banned' AND ${banned} LIKE '%,' || id || ',%'))))
    AND (${contains} IS NULL OR id LIKE ${prefix} ESCAPE '\\' OR search_text LIKE ${contains} ESCAPE '\\'
      OR (search_text IS NULL AND (lower(label) LIKE ${legacy} ESCAPE '\\'
        OR lower(customer_id) LIKE ${legacy} ESCAPE '\\')))`;
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
