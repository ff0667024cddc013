// Rows as every SQL engine returns them, mapped to the store's types once. PostgreSQL returns BIGINT
// columns as strings and SQLite as numbers; both become numbers here.
import type { Pet } from '@animal-store/spec';
import { type Plan, planQuotas } from '../plans.js';
import type { KeyDayCounts } from './operator-records.js';
import {
  type ApiKey,
  type CreationOutcome,
  type CreationRequest,
  idempotencyWindowMs,
  type PetFilter,
  petFilterNames,
} from './store.js';

export type Integer = number | string;

/**
 * How a property is stored: `integer` a BIGINT (PostgreSQL returns it as a string, SQLite as a number; both
 * become numbers), `text` as is, `json` an array or object in a JSON column (TEXT on SQLite, JSONB on
 * PostgreSQL): written as JSON text, read back parsed (node-postgres parses JSONB itself).
 */
export type ColumnKind = 'integer' | 'text' | 'json';
type Columns<T> = Record<keyof T, { column: string; kind: ColumnKind }>;

/**
 * The statements' parts and the mapping of `table`, whose rows are objects `T` (`id` assigned by the
 * database), from its property → column pairs: the SELECT list (of a table alias, optionally), the INSERT
 * of a new row that returns the stored one (with the engine's placeholders, `?` or `$1`, `$2`, ... given
 * their position from 1), its values in the INSERT's order, and the row read back as `T`.
 */
export function mapping<T extends { id: number }>(table: string, columns: Columns<T>) {
  const fields = Object.entries(columns) as [keyof T & string, { column: string; kind: ColumnKind }][];
  const select = (alias?: string): string =>
    fields.map(([, { column }]) => (alias ? `${alias}.${column}` : column)).join(', ');
  const created = fields.filter(([property]) => property !== 'id');
  const insert = (placeholder: (position: number) => string) =>
    `INSERT INTO ${table} (${created.map(([, { column }]) => column).join(', ')})
   VALUES (${created.map((_, i) => placeholder(i + 1)).join(', ')}) RETURNING ${select()}`;
  const values = (row: Omit<T, 'id'>): unknown[] =>
    created.map(([property, { kind }]) => {
      const value = (row as Record<string, unknown>)[property];
      return kind === 'json' && value !== undefined && value !== null ? JSON.stringify(value) : value;
    });
  // Read per row (a list maps a hundred): flat arrays and an indexed loop, no tuple destructured per field.
  const properties = fields.map(([property]) => property);
  const columnNames = fields.map(([, { column }]) => column);
  const kinds = fields.map(([, { kind }]) => kind);
  const toObject = (row: Record<string, unknown>): T => {
    const object: Record<string, unknown> = {};
    for (let i = 0; i < properties.length; i++) {
      const value = row[columnNames[i] as string];
      if (value === null || value === undefined) continue;
      const kind = kinds[i];
      object[properties[i] as string] =
        kind === 'integer'
          ? Number(value)
          : kind === 'json' && typeof value === 'string'
            ? JSON.parse(value)
            : value;
    }
    return object as T;
  };
  return { select, insert, values, toObject };
}

/**
 * Every property of the contract's Pet and the column that stores it, the one place they are paired:
 * `satisfies` makes a property the contract adds to Pet a type error here until it has a column (and a
 * migration on each engine: sqlite/migrations.ts, postgres/migrations.ts). Every statement that reads or
 * writes pets is built from it (petSelect, petInsert), so nothing else spells the columns out.
 */
export const petColumns = {
  id: { column: 'id', kind: 'integer' },
  name: { column: 'name', kind: 'text' },
  categoryId: { column: 'category_id', kind: 'integer' },
  status: { column: 'status', kind: 'text' },
} as const satisfies Columns<Pet>;

type PetColumn = (typeof petColumns)[keyof typeof petColumns]['column'];
export type PetRow = Record<PetColumn, unknown>;

const pets = mapping<Pet>('pets', petColumns);
/** The pet columns for a SELECT list, optionally of a table alias (`p.id, p.name, ...`). */
export const petSelect = pets.select;
/** The INSERT of a new pet that returns the stored row; its values are newPetValues'. */
export const petInsert = pets.insert;
/** The values of a new pet in petInsert's order. */
export const newPetValues = pets.values;
export const toPet = (row: PetRow): Pet => pets.toObject(row);

/** Each of listPets' filters as an engine writes it, given the placeholder of its value. */
export type FilterConditions = Record<keyof PetFilter, (value: string) => string>;

/**
 * The filters given, as conditions ANDed after a query's own (`where`, each with its engine's placeholder:
 * `placeholder(i)` for the i-th value, from 0, as petInsert's), and their values in that order.
 */
export function filterClause(
  filter: PetFilter,
  conditions: FilterConditions,
  placeholder: (index: number) => string,
): { where: string; values: unknown[] } {
  const names = petFilterNames.filter((name) => filter[name] !== undefined);
  return {
    where: names.map((name, i) => ` AND ${conditions[name](placeholder(i))}`).join(''),
    values: names.map((name) => filter[name]),
  };
}

/** An api_keys row (the secret hashes are checked by key-tokens.ts, never mapped out). */
export type KeyRow = {
  id: string;
  secret_hash: Buffer;
  plan: Plan;
  per_minute: Integer | null;
  per_day: Integer | null;
  label: string | null;
  customer_id: string | null;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  previous_secret_hash: Buffer | null;
  previous_valid_until: string | null;
  expires_at: string | null;
  disabled_at: string | null;
};

export const toKey = (row: KeyRow): ApiKey => ({
  id: row.id,
  plan: row.plan,
  quota:
    row.plan === 'enterprise'
      ? { perMinute: Number(row.per_minute), perDay: Number(row.per_day) }
      : planQuotas[row.plan],
  label: row.label,
  customerId: row.customer_id,
  createdAt: row.created_at,
  revokedAt: row.revoked_at,
  lastUsedAt: row.last_used_at,
  expiresAt: row.expires_at,
  disabledAt: row.disabled_at,
  previousValidUntil: row.previous_valid_until,
});

export type UsageRow = { key_id: string; day: string; admitted: Integer; limited: Integer; banned: Integer };

export const toKeyDayCounts = (row: UsageRow): KeyDayCounts => ({
  keyId: row.key_id,
  day: row.day,
  admitted: Number(row.admitted),
  limited: Number(row.limited),
  banned: Number(row.banned),
});

/** An api_keys row with the fingerprint of the create that made it (admin creates with an Idempotency-Key). */
export type CreatedKeyRow = KeyRow & { creation_fingerprint: string };

/**
 * What an earlier create with the same Idempotency-Key means for this one, on every engine: within the
 * window, its replay (the same body) or a refusal (another body); older, nothing (the earlier key lets go of
 * the Idempotency-Key and this request creates).
 */
export function earlierCreation(
  earlier: CreatedKeyRow,
  request: CreationRequest,
): CreationOutcome | undefined {
  if (earlier.created_at <= new Date(Date.now() - idempotencyWindowMs).toISOString()) return undefined;
  return earlier.creation_fingerprint === request.fingerprint
    ? { replayed: toKey(earlier) }
    : { reused: true };
}

/**
 * What readiness reads (Store.check), one statement in every engine: both ends of the pets index and the
 * keys table, the pages a request would touch.
 */
export const readinessRead =
  'SELECT (SELECT id FROM pets ORDER BY id LIMIT 1), (SELECT id FROM pets ORDER BY id DESC LIMIT 1), (SELECT id FROM api_keys LIMIT 1)';
