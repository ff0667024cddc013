// API keys on SQLite: prepared statements over the api_keys table.
import { newKeyRow, newKeyToken, openedKey, parseKeyToken } from '../key-tokens.js';
import { type KeyRow, toKey } from '../rows.js';
import type { KeyStore } from '../store.js';
import type { Db } from './database.js';

export function createSqliteKeyStore(db: Db): KeyStore {
  const insert = db.prepare(
    'INSERT INTO api_keys (id, secret_hash, plan, per_minute, per_day, label, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const byId = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE id = ?');
  const all = db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id');
  const revoke = db.prepare<[string, string]>(
    'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
  );
  const any = db.prepare<[], { id: string }>('SELECT id FROM api_keys LIMIT 1');
  const rotate = db.prepare<{ hash: Buffer; until: string | null; id: string }>(
    `UPDATE api_keys SET previous_secret_hash = CASE WHEN @until IS NULL THEN NULL ELSE secret_hash END,
       previous_valid_until = @until, secret_hash = @hash WHERE id = @id AND revoked_at IS NULL`,
  );
  const touch = db.prepare<[string, string]>('UPDATE api_keys SET last_used_at = ? WHERE id = ?');

  return {
    async create(options) {
      const { id, token, values } = newKeyRow(options);
      insert.run(...values);
      return { ...toKey(byId.get(id) as KeyRow), key: token };
    },
    async verify(token) {
      const parsed = parseKeyToken(token);
      if (!parsed) return undefined;
      const row = byId.get(parsed.id);
      return openedKey(parsed.secret, row);
    },
    async list() {
      return all.all().map(toKey);
    },
    async revoke(id) {
      return revoke.run(new Date().toISOString(), id).changes === 1;
    },
    async rotate(id, graceSeconds) {
      const { token, secretHash } = newKeyToken(id);
      const until = graceSeconds > 0 ? new Date(Date.now() + graceSeconds * 1000).toISOString() : null;
      return rotate.run({ hash: secretHash, until, id }).changes === 1 ? token : undefined;
    },
    async touch(id) {
      touch.run(new Date().toISOString(), id);
    },
    async isEmpty() {
      return any.get() === undefined;
    },
  };
}
