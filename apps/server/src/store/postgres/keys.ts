// API keys on PostgreSQL.
import {
  type KeyFilterName,
  keyFilterClause,
  keyFilterNames,
  keyFilterValues,
  keyOrder,
  searchText,
} from '../key-query.js';
import { newKeyColumns, newKeyRow, newRotation, storedLimits, verifyToken } from '../key-tokens.js';
import { type CreatedKeyRow, earlierCreation, type KeyRow, toKey } from '../rows.js';
import type { CreationOutcome, KeyStore } from '../store.js';
import type { Pg } from './database.js';

/** The filter's values as positional parameters from `$first` on, each typed (a null's type is not known). */
const types: Record<KeyFilterName, string> = {
  plan: 'text',
  customerId: 'text',
  revoked: 'boolean',
  state: 'text',
  now: 'text',
  banned: 'text',
  contains: 'text',
  prefix: 'text',
  legacy: 'text',
};
const filteredFrom = (first: number) =>
  keyFilterClause((name) => `$${first + keyFilterNames.indexOf(name)}::${types[name]}`);

const insert = `INSERT INTO api_keys (${newKeyColumns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`;

export function createPostgresKeyStore({ query }: Pg): KeyStore {
  return {
    async create(options) {
      const { token, values } = newKeyRow(options);
      const rows = await query<KeyRow>(`${insert} RETURNING *`, [...values]);
      return { ...toKey(rows[0] as KeyRow), key: token };
    },
    async createOnce(options, request): Promise<CreationOutcome> {
      // Concurrent creates with one Idempotency-Key serialise on its unique index: one inserts, the
      // others find its row.
      const { token, values } = newKeyRow(options, request);
      const [created] = await query<KeyRow>(
        `${insert} ON CONFLICT (creation_request) DO NOTHING RETURNING *`,
        [...values],
      );
      if (created) return { created: { ...toKey(created), key: token } };
      const [earlier] = await query<CreatedKeyRow>('SELECT * FROM api_keys WHERE creation_request = $1', [
        request.key,
      ]);
      if (!earlier) return this.createOnce(options, request); // forgotten meanwhile: try again
      const outcome = earlierCreation(earlier, request);
      if (outcome) return outcome;
      // Remembered for 24 hours only: the old key lets go of it, and this request creates.
      await query('UPDATE api_keys SET creation_request = NULL WHERE id = $1 AND creation_request = $2', [
        earlier.id,
        request.key,
      ]);
      return this.createOnce(options, request);
    },
    async get(id) {
      const [row] = await query<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [id]);
      return row && toKey(row);
    },
    async page(q) {
      const { after, beyond, orderBy } = keyOrder(q);
      const values = keyFilterValues(q);
      const rows = await query<KeyRow>(
        `SELECT * FROM api_keys WHERE (created_at, id) ${beyond} ($1, $2) AND ${filteredFrom(4)}
          ORDER BY ${orderBy} LIMIT $3`,
        [after.createdAt, after.id, q.limit, ...keyFilterNames.map((name) => values[name])],
      );
      return rows.map(toKey);
    },
    async count(filter) {
      const values = keyFilterValues(filter);
      const [row] = await query<{ n: string }>(
        `SELECT count(*) AS n FROM api_keys WHERE ${filteredFrom(1)}`,
        keyFilterNames.map((name) => values[name]),
      );
      return Number(row?.n ?? 0);
    },
    async update(id, fields) {
      const [row] = await query<KeyRow>(
        `UPDATE api_keys SET plan = $2, per_minute = $3, per_day = $4, label = $5, customer_id = $6,
           expires_at = $7, disabled_at = $8, search_text = $9
          WHERE id = $1 AND revoked_at IS NULL RETURNING *`,
        [
          id,
          fields.plan,
          ...storedLimits(fields.plan, fields.quota),
          fields.label,
          fields.customerId,
          fields.expiresAt,
          fields.disabledAt,
          searchText(fields.label, fields.customerId),
        ],
      );
      return row && toKey(row);
    },
    verify: (token) =>
      verifyToken(
        token,
        async (id) => (await query<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [id]))[0],
      ),
    async list() {
      return (await query<KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id')).map(toKey);
    },
    async revoke(id) {
      const rows = await query(
        'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING id',
        [new Date().toISOString(), id],
      );
      return rows.length === 1;
    },
    async rotate(id, graceSeconds) {
      const { token, secretHash, previousValidUntil: until } = newRotation(id, graceSeconds);
      const rows = await query(
        `UPDATE api_keys SET previous_secret_hash = CASE WHEN $2::text IS NULL THEN NULL ELSE secret_hash END,
           previous_valid_until = $2, secret_hash = $1 WHERE id = $3 AND revoked_at IS NULL RETURNING id`,
        [secretHash, until, id],
      );
      return rows.length === 1 ? { key: token, previousValidUntil: until } : undefined;
    },
    async touch(id) {
      await query('UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [new Date().toISOString(), id]);
    },
    async isEmpty() {
      return (await query('SELECT id FROM api_keys LIMIT 1')).length === 0;
    },
  };
}
