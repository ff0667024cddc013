// Pets on SQLite: prepared statements over the pets table. No HTTP here.
import type { Pet } from '@animal-store/spec';
import type Database from 'better-sqlite3';
import {
  type FilterConditions,
  filterClause,
  newPetValues,
  type PetRow,
  petInsert,
  petSelect,
  toPet,
} from '../rows.js';
import type { IdempotencyClaim, PetFilter, PetStore } from '../store.js';
import { IdempotencyClaimLostError } from '../unavailable.js';
import type { Db } from './database.js';

const columns = petSelect();

/** Each filter's condition (store.ts, petFilterNames). */
const conditions: FilterConditions = {
  status: (value) => `status = ${value}`,
};
const filtered = (filter: PetFilter) => filterClause(filter, conditions, () => '?');

export function createSqlitePetStore(db: Db): PetStore {
  const insert = db.prepare<unknown[], PetRow>(petInsert(() => '?'));
  const byId = db.prepare<[bigint], PetRow>(`SELECT ${columns} FROM pets WHERE id = ?`);
  // One prepared statement per SQL text (each combination of filters, each count of ids), made on first use.
  const statements = new Map<string, Database.Statement<unknown[], PetRow>>();
  const prepared = (sql: string) => {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare<unknown[], PetRow>(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
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
  return {
    async create(pet, accept, scope) {
      return create.immediate(pet, accept, scope);
    },
    async getMany(ids, filter) {
      const { where, values } = filtered(filter);
      const list = ids.map(() => '?').join(', ');
      return prepared(`SELECT ${columns} FROM pets WHERE id IN (${list})${where} ORDER BY id`)
        .all(...ids, ...values)
        .map(toPet);
    },
    async get(id) {
      const row = byId.get(id);
      return row && toPet(row);
    },
    async list({ limit, afterId, filter }) {
      const { where, values } = filtered(filter);
      const sql = `SELECT ${columns} FROM pets WHERE id > ?${where} ORDER BY id LIMIT ?`;
      const rows = prepared(sql).all(afterId, ...values, limit + 1);
      return { pets: rows.slice(0, limit).map(toPet), hasMore: rows.length > limit };
    },
  };
}
