// API keys on SQLite: prepared statements over the api_keys table.
import { type Plan, planQuotas } from '../../plans.js';
import { matches, newKeyRow, newKeyToken, parseKeyToken } from '../key-tokens.js';
import type { ApiKey, KeyStore } from '../store.js';
import type { Db } from './database.js';

type Row = {
  id: string;
  secret_hash: Buffer;
  plan: Plan;
  per_minute: number | null;
  per_day: number | null;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  previous_secret_hash: Buffer | null;
  previous_valid_until: string | null;
};

const toKey = (row: Row): ApiKey => ({
  id: row.id,
  plan: row.plan,
  quota:
    row.plan === 'enterprise'
      ? { perMinute: row.per_minute as number, perDay: row.per_day as number }
      : planQuotas[row.plan],
  label: row.label,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
  lastUsedAt: row.last_used_at,
});

export function createSqliteKeyStore(db: Db): KeyStore {
  const insert = db.prepare(
    'INSERT INTO api_keys (id, secret_hash, plan, per_minute, per_day, label, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const byId = db.prepare<[string], Row>('SELECT * FROM api_keys WHERE id = ?');
  const all = db.prepare<[], Row>('SELECT * FROM api_keys ORDER BY created_at, id');
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
      return { ...toKey(byId.get(id) as Row), key: token };
    },
    async verify(token) {
      const parsed = parseKeyToken(token);
      if (!parsed) return undefined;
      const row = byId.get(parsed.id);
      return matches(parsed.secret, row) ? toKey(row) : undefined;
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
