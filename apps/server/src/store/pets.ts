// The pet repository: prepared statements over the pets table. No HTTP here.
import type { NewPet, Pet, PetStatus } from '@animal-store/spec';
import type { Db } from './database.js';

type Row = { id: number; name: string; category_id: number; status: PetStatus };
const toPet = (row: Row): Pet => ({
  id: row.id,
  name: row.name,
  categoryId: row.category_id,
  status: row.status,
});

export type PetPage = { pets: Pet[]; hasMore: boolean };

export function createPetStore(db: Db) {
  const insert = db.prepare<[string, number, PetStatus], Row>(
    'INSERT INTO pets (name, category_id, status) VALUES (?, ?, ?) RETURNING id, name, category_id, status',
  );
  const byId = db.prepare<[bigint], Row>('SELECT id, name, category_id, status FROM pets WHERE id = ?');
  const after = db.prepare<[number, number], Row>(
    'SELECT id, name, category_id, status FROM pets WHERE id > ? ORDER BY id LIMIT ?',
  );
  const afterWithStatus = db.prepare<[PetStatus, number, number], Row>(
    'SELECT id, name, category_id, status FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?',
  );
  return {
    create(pet: NewPet & { status: PetStatus }): Pet {
      return toPet(insert.get(pet.name, pet.categoryId, pet.status) as Row);
    },
    /** `id` is a BigInt so that every int64 is matched exactly (none rounds to another pet's id). */
    get(id: bigint): Pet | undefined {
      const row = byId.get(id);
      return row && toPet(row);
    },
    /** One page in ascending id order after `afterId`; one extra row is read to know whether more exist. */
    list(options: { limit: number; status?: PetStatus; afterId: number }): PetPage {
      const { limit, status, afterId } = options;
      const rows = status ? afterWithStatus.all(status, afterId, limit + 1) : after.all(afterId, limit + 1);
      return { pets: rows.slice(0, limit).map(toPet), hasMore: rows.length > limit };
    },
  };
}

export type PetStore = ReturnType<typeof createPetStore>;
