// Idempotency keys on PostgreSQL: one statement decides each claim.
import { type PetRow, petSelect, toPet } from '../rows.js';
import type { IdempotencyStore } from '../store.js';
import type { Pg } from './database.js';

export function createPostgresIdempotencyStore({ query }: Pg): IdempotencyStore {
  return {
    async claim(scope, fingerprint, t) {
      // One statement decides: insert, or replace a stale record, or leave the live one; concurrent
      // claims of one key serialise on its primary key, and exactly one of them gets a row back.
      const claimed = await query(
        `INSERT INTO idempotency_keys (api_key_id, key, fingerprint, created_at, claim) VALUES ($1, $2, $3, $4, $7)
         ON CONFLICT (api_key_id, key) DO UPDATE
           SET fingerprint = EXCLUDED.fingerprint, created_at = EXCLUDED.created_at, pet_id = NULL, claim = EXCLUDED.claim
           WHERE idempotency_keys.created_at < $5 OR (idempotency_keys.pet_id IS NULL AND idempotency_keys.created_at < $6)
         RETURNING key`,
        [scope.apiKeyId, scope.key, fingerprint, t.now, t.expireBefore, t.abandonBefore, scope.token],
      );
      if (claimed.length === 1) return undefined;
      const [row] = await query<PetRow & { fingerprint: string; pet_id: string | null }>(
        `SELECT k.fingerprint, k.pet_id, ${petSelect('p')}
           FROM idempotency_keys k LEFT JOIN pets p ON p.id = k.pet_id
          WHERE k.api_key_id = $1 AND k.key = $2`,
        [scope.apiKeyId, scope.key],
      );
      if (!row) return this.claim(scope, fingerprint, t); // released meanwhile: try again
      return { fingerprint: row.fingerprint, ...(row.pet_id !== null && { pet: toPet(row) }) };
    },
    async release(scope) {
      await query(
        'DELETE FROM idempotency_keys WHERE api_key_id = $1 AND key = $2 AND claim = $3 AND pet_id IS NULL',
        [scope.apiKeyId, scope.key, scope.token],
      );
    },
    async prune(before) {
      return (await query('DELETE FROM idempotency_keys WHERE created_at < $1 RETURNING key', [before]))
        .length;
    },
  };
}
