// Pets on PostgreSQL. No HTTP here.
import type pg from 'pg';
import { newPetValues, type PetRow, petInsert, petSelect, toPet } from '../rows.js';
import type { PetStore } from '../store.js';
import { type Pg, translate } from './database.js';

const columns = petSelect();
const insert = petInsert((position) => `$${position}`);

export function createPostgresPetStore({ pool, query }: Pg): PetStore {
  return {
    async create(pet, accept, scope) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw translate(error);
      }
      try {
        await client.query('BEGIN');
        const { rows } = await client.query<PetRow>(insert, newPetValues(pet));
        const stored = toPet(rows[0] as PetRow);
        accept(stored);
        if (scope) {
          await client.query('UPDATE idempotency_keys SET pet_id = $1 WHERE api_key_id = $2 AND key = $3', [
            stored.id,
            scope.apiKeyId,
            scope.key,
          ]);
        }
        await client.query('COMMIT');
        client.release();
        return stored;
      } catch (error) {
        const broken = await client.query('ROLLBACK').then(
          () => false,
          () => true,
        );
        client.release(broken); // a connection that cannot even roll back is discarded, not reused
        throw translate(error);
      }
    },
    async getMany(ids, status) {
      const rows = await query<PetRow>(
        `SELECT ${columns} FROM pets WHERE id = ANY($1::bigint[])${status ? ' AND status = $2' : ''} ORDER BY id`,
        [ids.map(String), ...(status ? [status] : [])],
      );
      return rows.map(toPet);
    },
    async get(id) {
      const rows = await query<PetRow>(`SELECT ${columns} FROM pets WHERE id = $1`, [id.toString()]);
      return rows[0] && toPet(rows[0]);
    },
    async list({ limit, status, afterId }) {
      const rows = status
        ? await query<PetRow>(
            `SELECT ${columns} FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`,
            [status, afterId, limit + 1],
          )
        : await query<PetRow>(`SELECT ${columns} FROM pets WHERE id > $1 ORDER BY id LIMIT $2`, [
            afterId,
            limit + 1,
          ]);
      return { pets: rows.slice(0, limit).map(toPet), hasMore: rows.length > limit };
    },
  };
}
