// Idempotency keys on SQLite, in the shape of PostgreSQL's (postgres/idempotency.ts): one statement decides
// each claim, so concurrent requests with one key (from any process on the file) see exactly one winner.
import { type PetRow, petSelect, toPet } from '../rows.js';
import type { IdempotencyStore } from '../store.js';
import type { Db } from './database.js';

type Row = PetRow & { fingerprint: string; pet_id: number | null };
type Claim = {
  apiKeyId: string;
  key: string;
  token: string;
  fingerprint: string;
  now: number;
  expireBefore: number;
  abandonBefore: number;
};

export function createSqliteIdempotencyStore(db: Db): IdempotencyStore {
  // Insert, or replace a stale record, or leave the live one: a row comes back only to the winner.
  const claim = db.prepare<Claim, { key: string }>(
    `INSERT INTO idempotency_keys (api_key_id, key, fingerprint, created_at, claim)
       VALUES (@apiKeyId, @key, @fingerprint, @now, @token)
     ON CONFLICT (api_key_id, key) DO UPDATE
       SET fingerprint = excluded.fingerprint, created_at = excluded.created_at, pet_id = NULL, claim = excluded.claim
       WHERE idempotency_keys.created_at < @expireBefore
          OR (idempotency_keys.pet_id IS NULL AND idempotency_keys.created_at < @abandonBefore)
     RETURNING key`,
  );
  const find = db.prepare<[string, string], Row>(
    `SELECT k.fingerprint, k.pet_id, ${petSelect('p')}
       FROM idempotency_keys k LEFT JOIN pets p ON p.id = k.pet_id
      WHERE k.api_key_id = ? AND k.key = ?`,
  );
  const release = db.prepare<[string, string, string]>(
    'DELETE FROM idempotency_keys WHERE api_key_id = ? AND key = ? AND claim = ? AND pet_id IS NULL',
  );
  const prune = db.prepare<[number]>('DELETE FROM idempotency_keys WHERE created_at < ?');
  return {
    async claim(scope, fingerprint, t) {
      const { apiKeyId, key, token } = scope;
      if (claim.get({ apiKeyId, key, token, fingerprint, ...t })) return undefined;
      const row = find.get(apiKeyId, key);
      if (!row) return this.claim(scope, fingerprint, t); // released meanwhile: try again
      return { fingerprint: row.fingerprint, ...(row.pet_id !== null && { pet: toPet(row) }) };
    },
    async release(scope) {
      release.run(scope.apiKeyId, scope.key, scope.token);
    },
    async prune(before) {
      return prune.run(before).changes;
    },
  };
}
