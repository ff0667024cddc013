// API keys on PostgreSQL.
import { newKeyRow, newKeyToken, openedKey, parseKeyToken } from '../key-tokens.js';
import { type KeyRow, toKey } from '../rows.js';
import type { KeyStore } from '../store.js';
import type { Pg } from './database.js';

export function createPostgresKeyStore({ query }: Pg): KeyStore {
  return {
    async create(options) {
      const { token, values } = newKeyRow(options);
      const rows = await query<KeyRow>(
        'INSERT INTO api_keys (id, secret_hash, plan, per_minute, per_day, label, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *',
        [...values],
      );
      return { ...toKey(rows[0] as KeyRow), key: token };
    },
    async verify(token) {
      const parsed = parseKeyToken(token);
      if (!parsed) return undefined;
      const [row] = await query<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [parsed.id]);
      return openedKey(parsed.secret, row);
    },
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
      const { token, secretHash } = newKeyToken(id);
      const until = graceSeconds > 0 ? new Date(Date.now() + graceSeconds * 1000).toISOString() : null;
      const rows = await query(
        `UPDATE api_keys SET previous_secret_hash = CASE WHEN $2::text IS NULL THEN NULL ELSE secret_hash END,
           previous_valid_until = $2, secret_hash = $1 WHERE id = $3 AND revoked_at IS NULL RETURNING id`,
        [secretHash, until, id],
      );
      return rows.length === 1 ? token : undefined;
    },
    async touch(id) {
      await query('UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [new Date().toISOString(), id]);
    },
    async isEmpty() {
      return (await query('SELECT id FROM api_keys LIMIT 1')).length === 0;
    },
  };
}
