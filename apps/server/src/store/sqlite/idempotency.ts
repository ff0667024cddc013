// Idempotency keys on SQLite: a claim is one immediate transaction, so concurrent requests with one key
// (from any process on the file) see exactly one winner.
import { type PetRow, petSelect, toPet } from '../rows.js';
import type { IdempotencyStore } from '../store.js';
import type { Db } from './database.js';

type Row = PetRow & { fingerprint: string; created_at: number; pet_id: number | null };

export function createSqliteIdempotencyStore(db: Db): IdempotencyStore {
  const find = db.prepare<[string, string], Row>(
    `SELECT k.fingerprint, k.created_at, k.pet_id, ${petSelect('p')}
       FROM idempotency_keys k LEFT JOIN pets p ON p.id = k.pet_id
      WHERE k.api_key_id = ? AND k.key = ?`,
  );
  const remove = db.prepare<[string, string]>(
    'DELETE FROM idempotency_keys WHERE api_key_id = ? AND key = ?',
  );
  const insert = db.prepare<[string, string, string, number]>(
    'INSERT INTO idempotency_keys (api_key_id, key, fingerprint, created_at) VALUES (?, ?, ?, ?)',
  );
  const release = db.prepare<[string, string]>(
    'DELETE FROM idempotency_keys WHERE api_key_id = ? AND key = ? AND pet_id IS NULL',
  );
  const prune = db.prepare<[number]>('DELETE FROM idempotency_keys WHERE created_at < ?');
  const claim = db.transaction(
    (
      apiKeyId: string,
      key: string,
      fingerprint: string,
      t: { now: number; expireBefore: number; abandonBefore: number },
    ) => {
      const row = find.get(apiKeyId, key);
      const stale =
        row && (row.created_at < t.expireBefore || (row.pet_id === null && row.created_at < t.abandonBefore));
      if (row && !stale) {
        return {
          fingerprint: row.fingerprint,
          ...(row.pet_id !== null && { pet: toPet(row) }),
        };
      }
      if (row) remove.run(apiKeyId, key);
      insert.run(apiKeyId, key, fingerprint, t.now);
      return undefined;
    },
  );
  return {
    async claim(scope, fingerprint, times) {
      return claim.immediate(scope.apiKeyId, scope.key, fingerprint, times);
    },
    async release(scope) {
      release.run(scope.apiKeyId, scope.key);
    },
    async prune(before) {
      return prune.run(before).changes;
    },
  };
}
