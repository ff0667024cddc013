// API keys. A key reads `as_<id>_<secret>`: the id is public (it names the key in listings and logs), the
// secret is 256 random bits stored only as a SHA-256 hash (a fast hash suffices for random secrets) and
// compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { type Plan, planQuotas, type Quota } from '../limits/plans.js';
import type { Db } from './database.js';

export type ApiKey = {
  id: string;
  plan: Plan;
  quota: Quota;
  label: string | null;
  createdAt: string;
  revokedAt: string | null;
};

type Row = {
  id: string;
  secret_hash: Buffer;
  plan: Plan;
  per_minute: number | null;
  per_day: number | null;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
};

const keyPattern = /^as_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;
const hash = (secret: string) => createHash('sha256').update(secret).digest();
const decoy = hash('decoy');

function toKey(row: Row): ApiKey {
  const quota =
    row.plan === 'enterprise'
      ? { perMinute: row.per_minute as number, perDay: row.per_day as number }
      : planQuotas[row.plan];
  return {
    id: row.id,
    plan: row.plan,
    quota,
    label: row.label,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

export function createKeyStore(db: Db) {
  const insert = db.prepare(
    'INSERT INTO api_keys (id, secret_hash, plan, per_minute, per_day, label, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const byId = db.prepare<[string], Row>('SELECT * FROM api_keys WHERE id = ?');
  const all = db.prepare<[], Row>('SELECT * FROM api_keys ORDER BY created_at, id');
  const revoke = db.prepare<[string, string]>(
    'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
  );
  const count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM api_keys');

  return {
    /** Creates a key; the returned `key` is the only time the secret exists outside the caller. */
    create(options: { plan: Plan; quota?: Quota; label?: string }): ApiKey & { key: string } {
      const { plan, quota, label } = options;
      if ((plan === 'enterprise') !== (quota !== undefined)) {
        throw new Error(
          'enterprise keys need their own per-minute and per-day limits; other plans take none',
        );
      }
      const id = randomBytes(6).toString('hex');
      const secret = randomBytes(32).toString('base64url');
      const createdAt = new Date().toISOString();
      insert.run(
        id,
        hash(secret),
        plan,
        quota?.perMinute ?? null,
        quota?.perDay ?? null,
        label ?? null,
        createdAt,
      );
      return { ...toKey(byId.get(id) as Row), key: `as_${id}_${secret}` };
    },
    /** The active key a bearer token names, or undefined (malformed, unknown, wrong secret, revoked). */
    verify(token: string): ApiKey | undefined {
      const match = keyPattern.exec(token);
      if (!match) return undefined;
      const row = byId.get(match[1] as string);
      const ok = timingSafeEqual(hash(match[2] as string), row?.secret_hash ?? decoy) && row !== undefined;
      return ok && row.revoked_at === null ? toKey(row) : undefined;
    },
    list(): ApiKey[] {
      return all.all().map(toKey);
    },
    /** Revokes a key; false when there is no such active key. */
    revoke(id: string): boolean {
      return revoke.run(new Date().toISOString(), id).changes === 1;
    },
    isEmpty(): boolean {
      return (count.get() as { n: number }).n === 0;
    },
  };
}

export type KeyStore = ReturnType<typeof createKeyStore>;
