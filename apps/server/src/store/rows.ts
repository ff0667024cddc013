// Rows as every SQL engine returns them, mapped to the store's types once. PostgreSQL returns BIGINT
// columns as strings and SQLite as numbers; both become numbers here.
import type { Pet } from '@animal-store/spec';
import { type Plan, planQuotas } from '../plans.js';
import {
  type ApiKey,
  type CreationOutcome,
  type CreationRequest,
  idempotencyWindowMs,
  type KeyDayCounts,
} from './store.js';

type Integer = number | string;

/**
 * Every property of the contract's Pet and the column that stores it, the one place they are paired:
 * `satisfies` makes a property the contract adds to Pet a type error here until it has a column (and a
 * migration on each engine: sqlite/database.ts, postgres/database.ts). Every statement that reads or
 * writes pets is built from it (petSelect, petInsert), so nothing else spells the columns out.
 * `integer` marks the columns PostgreSQL returns as strings (BIGINT).
 */
export const petColumns = {
  id: { column: 'id', integer: true },
  name: { column: 'name', integer: false },
  categoryId: { column: 'category_id', integer: true },
  status: { column: 'status', integer: false },
} as const satisfies Record<keyof Pet, { column: string; integer: boolean }>;

type PetColumn = (typeof petColumns)[keyof typeof petColumns]['column'];
export type PetRow = Record<PetColumn, string | number>;

const petFields = Object.entries(petColumns) as [keyof Pet, { column: PetColumn; integer: boolean }][];
/** The pet columns for a SELECT list, optionally of a table alias (`p.id, p.name, ...`). */
export const petSelect = (alias?: string): string =>
  petFields.map(([, { column }]) => (alias ? `${alias}.${column}` : column)).join(', ');
/** The properties of a new pet (all but the id) and their columns, in one order, for an INSERT. */
const newPetColumns = petFields.filter(([property]) => property !== 'id');
/**
 * The INSERT of a new pet that returns the stored row, with the engine's placeholders (`?`, or `$1`, `$2`,
 * ... given their position from 1); its values are newPetValues'.
 */
export const petInsert = (placeholder: (position: number) => string): string =>
  `INSERT INTO pets (${newPetColumns.map(([, { column }]) => column).join(', ')})
   VALUES (${newPetColumns.map((_, i) => placeholder(i + 1)).join(', ')}) RETURNING ${petSelect()}`;
/** The values of a new pet in petInsert's order. */
export const newPetValues = (pet: Omit<Pet, 'id'>): unknown[] =>
  newPetColumns.map(([property]) => pet[property as keyof Omit<Pet, 'id'>]);

export const toPet = (row: PetRow): Pet => {
  const pet: Record<string, unknown> = {};
  for (const [property, { column, integer }] of petFields) {
    const value = row[column];
    if (value !== null && value !== undefined) pet[property] = integer ? Number(value) : value;
  }
  return pet as Pet;
};

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
