// listKeys' search (`q`): one text that finds a key by the start of its id, or by a part of its label or
// customer id, the case of letters ignored. One condition for both engines (SQL's LIKE, with the text's own
// `%`, `_` and `\` made plain), each engine naming its parameters; the text is lowered here, the columns
// by the engine (SQLite's lower() folds ASCII letters only, PostgreSQL's every letter).

/** The LIKE patterns of a search: `prefix` for the id, `contains` for the label and customer id. */
export function keySearchPatterns(search: string | undefined): {
  prefix: string | null;
  contains: string | null;
} {
  if (search === undefined) return { prefix: null, contains: null };
  const plain = search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
  return { prefix: `${plain}%`, contains: `%${plain}%` };
}

/** The condition, given how the engine names the two patterns (`contains` typed where it must be). */
export const keySearchCondition = (contains: string, prefix: string) =>
  `(${contains} IS NULL OR id LIKE ${prefix} ESCAPE '\\' OR lower(label) LIKE ${contains} ESCAPE '\\'` +
  ` OR lower(customer_id) LIKE ${contains} ESCAPE '\\')`;
