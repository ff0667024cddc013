// Pets on SQLite: prepared statements over the pets table. No HTTP here.
import type { Pet, PetStatus } from '@animal-store/spec';
import type Database from 'better-sqlite3';
import { newPetValues, type PetRow, petInsert, petSelect, toPet } from '../rows.js';
import type { IdempotencyClaim, PetStore } from '../store.js';
import { IdempotencyClaimLostError } from '../unavailable.js';
import type { Db } from './database.js';

const columns = petSelect();

export function createSqlitePetStore(db: Db): PetStore {
  const insert = db.prepare<unknown[], PetRow>(petInsert(() => '?'));
  const byId = db.prepare<[bigint], PetRow>(`SELECT ${columns} FROM pets WHERE id = ?`);
  const after = db.prepare<[number, number], PetRow>(
    `SELECT ${columns} FROM pets WHERE id > ? ORDER BY id LIMIT ?`,
  );
  const afterWithStatus = db.prepare<[PetStatus, number, number], PetRow>(
    `SELECT ${columns} FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`,
  );
  // Only while the claim is this request's (see IdempotencyClaim): one taken over is left to its new holder.
  const complete = db.prepare<[number, string, string, string]>(
    'UPDATE idempotency_keys SET pet_id = ? WHERE api_key_id = ? AND key = ? AND claim = ? AND pet_id IS NULL',
  );
  // The row as SQLite returns it (RETURNING reads the stored value back), judged before the commit.
  const create = db.transaction(
    (pet: Parameters<PetStore['create']>[0], accept: (stored: Pet) => void, claim?: IdempotencyClaim) => {
      const stored = toPet(insert.get(...newPetValues(pet)) as PetRow);
      accept(stored);
      if (claim && complete.run(stored.id, claim.apiKeyId, claim.key, claim.token).changes === 0) {
        throw new IdempotencyClaimLostError('The Idempotency-Key was taken over by another request.');
      }
      return stored;
    },
  );
  const byIds = new Map<string, Database.Statement<unknown[], PetRow>>();
  const many = (count: number, withStatus: boolean) => {
    const id = `${count}/${withStatus}`;
    let statement = byIds.get(id);
    if (!statement) {
      const list = Array.from({ length: count }, () => '?').join(', ');
      statement = db.prepare<unknown[], PetRow>(
        `SELECT ${columns} FROM pets WHERE id IN (${list})${withStatus ? ' AND status = ?' : ''} ORDER BY id`,
      );
      byIds.set(id, statement);
    }
    return statement;
  };
  return {
    async create(pet, accept, scope) {
      return create.immediate(pet, accept, scope);
    },
    async getMany(ids, status) {
      return many(ids.length, status !== undefined)
        .all(...ids, ...(status ? [status] : []))
        .map(toPet);
    },
    async get(id) {
      const row = byId.get(id);
      return row && toPet(row);
    },
    async list({ limit, status, afterId }) {
      const rows = status ? afterWithStatus.all(status, afterId, limit + 1) : after.all(afterId, limit + 1);
      return { pets: rows.slice(0, limit).map(toPet), hasMore: rows.length > limit };
    },
  };
}
