// API keys on SQLite: prepared statements over the api_keys table.
import { keyFilterClause, keyFilterValues, keyOrder, searchText } from '../key-query.js';
import { newKeyColumns, newKeyRow, newRotation, storedLimits, verifyToken } from '../key-tokens.js';
import { type CreatedKeyRow, earlierCreation, type KeyRow, toKey } from '../rows.js';
import type { CreationOutcome, CreationRequest, KeyFields, KeyFilter, KeyQuery, KeyStore } from '../store.js';
import type { Db } from './database.js';

export function createSqliteKeyStore(db: Db): KeyStore {
  const insert = db.prepare(
    `INSERT INTO api_keys (${newKeyColumns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const byId = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE id = ?');
  const byRequest = db.prepare<[string], CreatedKeyRow>('SELECT * FROM api_keys WHERE creation_request = ?');
  const forgetRequest = db.prepare<[string]>('UPDATE api_keys SET creation_request = NULL WHERE id = ?');
  const all = db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id');
  const filtered = keyFilterClause((name) => `@${name}`);
  const pageIn = (order: 'oldest' | 'newest') => {
    const { beyond, orderBy } = keyOrder({ limit: 0, order });
    return db.prepare<Record<string, unknown>, KeyRow>(
      `SELECT * FROM api_keys WHERE (created_at, id) ${beyond} (@createdAt, @id) AND ${filtered}
        ORDER BY ${orderBy} LIMIT @limit`,
    );
  };
  const pages = { oldest: pageIn('oldest'), newest: pageIn('newest') };
  const counted = db.prepare<Record<string, unknown>, { n: number }>(
    `SELECT count(*) AS n FROM api_keys WHERE ${filtered}`,
  );
  /** The filter's values as the statements bind them (SQLite has no booleans). */
  const bound = (filter: KeyFilter) => {
    const values = keyFilterValues(filter);
    return { ...values, revoked: values.revoked === null ? null : Number(values.revoked) };
  };
  const update = db.prepare<Record<string, unknown>>(
    `UPDATE api_keys SET plan = @plan, per_minute = @perMinute, per_day = @perDay, label = @label,
       customer_id = @customerId, expires_at = @expiresAt, disabled_at = @disabledAt, search_text = @searchText
     WHERE id = @id AND revoked_at IS NULL`,
  );
  const revoke = db.prepare<[string, string]>(
    'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
  );
  const any = db.prepare<[], { id: string }>('SELECT id FROM api_keys LIMIT 1');
  const rotate = db.prepare<{ hash: Buffer; until: string | null; id: string }>(
    `UPDATE api_keys SET previous_secret_hash = CASE WHEN @until IS NULL THEN NULL ELSE secret_hash END,
       previous_valid_until = @until, secret_hash = @hash WHERE id = @id AND revoked_at IS NULL`,
  );
  const touch = db.prepare<[string, string]>('UPDATE api_keys SET last_used_at = ? WHERE id = ?');

  const createOnce = db.transaction((options: KeyFields, request: CreationRequest): CreationOutcome => {
    const earlier = byRequest.get(request.key);
    const outcome = earlier && earlierCreation(earlier, request);
    if (outcome) return outcome;
    if (earlier) forgetRequest.run(earlier.id); // remembered for 24 hours only
    const { id, token, values } = newKeyRow(options, request);
    insert.run(...values);
    return { created: { ...toKey(byId.get(id) as KeyRow), key: token } };
  });

  return {
    async create(options) {
      const { id, token, values } = newKeyRow(options);
      insert.run(...values);
      return { ...toKey(byId.get(id) as KeyRow), key: token };
    },
    // One immediate transaction: concurrent creates with one Idempotency-Key (from any process on the
    // file) see exactly one winner.
    createOnce: async (options, request) => createOnce.immediate(options, request),
    async get(id) {
      const row = byId.get(id);
      return row && toKey(row);
    },
    async page(query: KeyQuery) {
      const { after } = keyOrder(query);
      return pages[query.order ?? 'oldest'].all({ ...after, ...bound(query), limit: query.limit }).map(toKey);
    },
    async count(filter) {
      return counted.get(bound(filter))?.n ?? 0;
    },
    async update(id, fields) {
      const [perMinute, perDay] = storedLimits(fields.plan, fields.quota);
      const { changes } = update.run({
        id,
        plan: fields.plan,
        perMinute,
        perDay,
        label: fields.label,
        customerId: fields.customerId,
        expiresAt: fields.expiresAt,
        disabledAt: fields.disabledAt,
        searchText: searchText(fields.label, fields.customerId),
      });
      return changes === 1 ? toKey(byId.get(id) as KeyRow) : undefined;
    },
    verify: (token) => verifyToken(token, (id) => byId.get(id)),
    async list() {
      return all.all().map(toKey);
    },
    async revoke(id) {
      return revoke.run(new Date().toISOString(), id).changes === 1;
    },
    async rotate(id, graceSeconds) {
      const { token, secretHash, previousValidUntil: until } = newRotation(id, graceSeconds);
      const rotated = rotate.run({ hash: secretHash, until, id }).changes === 1;
      return rotated ? { key: token, previousValidUntil: until } : undefined;
    },
    async touch(id) {
      touch.run(new Date().toISOString(), id);
    },
    async isEmpty() {
      return any.get() === undefined;
    },
  };
}
