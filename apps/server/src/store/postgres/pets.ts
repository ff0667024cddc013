// Pets on PostgreSQL. No HTTP here.
import {
  type FilterConditions,
  filterClause,
  newPetValues,
  type PetRow,
  petInsert,
  petSelect,
  toPet,
} from '../rows.js';
import type { PetFilter, PetStore } from '../store.js';
import { IdempotencyClaimLostError, StoreUnavailableError } from '../unavailable.js';
import type { Pg } from './database.js';
import { connectionLost, translate } from './failures.js';

const columns = petSelect();

/** Each filter's condition (store.ts, petFilterNames). */
const conditions: FilterConditions = {
  status: (value) => `status = ${value}`,
};
/** The filter's conditions, their placeholders numbered from `$first`. */
const filtered = (filter: PetFilter, first: number) =>
  filterClause(filter, conditions, (i) => `$${first + i}`);
const insert = petInsert((position) => `$${position}`);

export function createPostgresPetStore({ checkout, query }: Pg): PetStore {
  return {
    async create(pet, accept, claim) {
      if (!claim) {
        // One statement, one round trip (autocommit). The response describing the pet is judged before
        // the insert, on every field but the id (a positive BIGINT the database assigns, valid as any),
        // so a create whose response would break the contract commits nothing; judged again after, and
        // should the id alone break it, the pet is taken back out.
        accept({ id: 1, ...pet });
        const rows = await query<PetRow>(insert, newPetValues(pet));
        const stored = toPet(rows[0] as PetRow);
        try {
          accept(stored);
        } catch (error) {
          await query('DELETE FROM pets WHERE id = $1', [String(stored.id)]).catch(() => {});
          throw error;
        }
        return stored;
      }
      // With an Idempotency-Key: the pet and the claim's link in one transaction.
      const { client, run } = await checkout(); // its statements share one deadline (database.ts)
      let committing = false;
      try {
        await run('BEGIN');
        const { rows } = await run<PetRow>(insert, newPetValues(pet));
        const stored = toPet(rows[0] as PetRow);
        accept(stored);
        // Fenced by the claim's token: a request whose claim was taken over (it was presumed dead, cut off
        // from the database) links nothing and rolls back, so its pet is never committed. The row lock the
        // update takes holds off any takeover until this transaction ends.
        if (claim) {
          const linked = await run(
            'UPDATE idempotency_keys SET pet_id = $1 WHERE api_key_id = $2 AND key = $3 AND claim = $4 AND pet_id IS NULL',
            [stored.id, claim.apiKeyId, claim.key, claim.token],
          );
          if (linked.rowCount === 0) {
            throw new IdempotencyClaimLostError('The Idempotency-Key was taken over by another request.');
          }
        }
        committing = true;
        await run('COMMIT');
        client.release();
        return stored;
      } catch (error) {
        // A connection the server answered on is rolled back and reused. One that timed out or broke is
        // destroyed without a word: a ROLLBACK would wait on it again, and the server ends the transaction
        // itself (idle_in_transaction_session_timeout, or when it sees the connection close).
        const rolledBack =
          !connectionLost(error) &&
          (await client.query('ROLLBACK').then(
            () => true,
            () => false,
          ));
        client.release(rolledBack ? undefined : true);
        const failure = translate(error);
        // Lost before its COMMIT was sent, the transaction is rolled back by the server: nothing changed.
        if (failure instanceof StoreUnavailableError && failure.outcomeUnknown && !committing) {
          throw new StoreUnavailableError(failure.message);
        }
        throw failure;
      }
    },
    async getMany(ids, filter) {
      const { where, values } = filtered(filter, 2);
      const rows = await query<PetRow>(
        `SELECT ${columns} FROM pets WHERE id = ANY($1::bigint[])${where} ORDER BY id`,
        [ids.map(String), ...values],
      );
      return rows.map(toPet);
    },
    async get(id) {
      const rows = await query<PetRow>(`SELECT ${columns} FROM pets WHERE id = $1`, [id.toString()]);
      return rows[0] && toPet(rows[0]);
    },
    async list({ limit, afterId, filter }) {
      const { where, values } = filtered(filter, 3);
      const rows = await query<PetRow>(
        `SELECT ${columns} FROM pets WHERE id > $1${where} ORDER BY id LIMIT $2`,
        [afterId, limit + 1, ...values],
      );
      return { pets: rows.slice(0, limit).map(toPet), hasMore: rows.length > limit };
    },
  };
}
