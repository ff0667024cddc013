// What the HTTP layer and the key command see of the store, whatever engine keeps it. Every method is
// async so that a networked engine can implement it; the HTTP layer never imports an engine folder.
import type { NewPet, Pet, PetStatus } from '@animal-store/spec';
import type { Plan, Quota } from '../plans.js';
import type { AuditStore, UsageStore } from './operator-records.js';

export type ApiKey = {
  id: string;
  plan: Plan;
  quota: Quota;
  label: string | null;
  /** The customer the key belongs to, as the billing system names them (admin API), or null. */
  customerId: string | null;
  createdAt: string;
  revokedAt: string | null;
  /** Last request with the key (recorded at most once a minute per instance), or null. */
  lastUsedAt: string | null;
  /** When the key stops opening the API (the gate answers `key_expired` from then on), or null: never. */
  expiresAt: string | null;
  /** Since when the key is disabled (the gate answers `key_disabled`), or null: enabled. */
  disabledAt: string | null;
  /** After a rotation with a grace period: until when its previous secret opens it (it may have passed). */
  previousValidUntil: string | null;
  /** Set by `verify` when the token was the previous secret of a rotation: when its grace period ends. */
  graceEndsAt?: string;
};

export type PetPage = { pets: Pet[]; hasMore: boolean };

/** How long an Idempotency-Key is remembered (the contract: 24 hours). */
export const idempotencyWindowMs = 24 * 3_600_000;

/** One Idempotency-Key of one API key. */
export type IdempotencyScope = { apiKeyId: string; key: string };

/**
 * One request's claim of an Idempotency-Key: its token fences the claim, so that only the request holding
 * it now can complete it (link its pet) or give it back, never one whose claim was taken over.
 */
export type IdempotencyClaim = IdempotencyScope & { token: string };

/**
 * listPets' filters (query parameters of the contract): a pet passes when it matches every one given. A
 * filter the contract adds is named here, in the order a cursor records them (api/pets/cursor.ts), and gets
 * its condition on each engine (sqlite/pets.ts, postgres/pets.ts: a type error there until it has one).
 */
export const petFilterNames = ['status'] as const;
export type PetFilter = { status?: PetStatus };
petFilterNames satisfies readonly (keyof PetFilter)[];

export interface PetStore {
  /**
   * Adds a pet. `accept` sees the pet exactly as stored (read back from the engine) before the write is
   * committed; if it throws, nothing is committed and the error propagates. With `idempotency`, the
   * claimed key is completed with this pet in the same transaction, which commits only while the claim is
   * still this one (else IdempotencyClaimLostError, and nothing is committed).
   */
  create(
    pet: NewPet & { status: PetStatus },
    accept: (stored: Pet) => void,
    idempotency?: IdempotencyClaim,
  ): Promise<Pet>;
  /** The pets with these ids (those that exist) that pass the filter, in ascending id order. */
  getMany(ids: bigint[], filter: PetFilter): Promise<Pet[]>;
  /** `id` is a BigInt so that every int64 is matched exactly (none rounds to another pet's id). */
  get(id: bigint): Promise<Pet | undefined>;
  /** One page in ascending id order after `afterId`, of the pets that pass the filter. */
  list(options: { limit: number; afterId: number; filter: PetFilter }): Promise<PetPage>;
}

/** What a key can be created with, and what an update sets (every field; the caller merges). */
export type KeyFields = {
  plan: Plan;
  quota: Quota;
  label?: string | null;
  customerId?: string | null;
  expiresAt?: string | null;
  /** Set by an update only (a key is created enabled). */
  disabledAt?: string | null;
};

/** Which keys a list holds (key-query.ts). */
export type KeyState = 'active' | 'banned' | 'disabled' | 'expired' | 'revoked';

export type KeyFilter = {
  plan?: Plan | undefined;
  customerId?: string | undefined;
  revoked?: boolean | undefined;
  /** Keys in this state now (the admin contract's listKeys `state`). */
  state?: KeyState | undefined;
  /** With state `banned`: the ids of the keys banned now (the limiter's ban list). */
  banned?: readonly string[] | undefined;
  /** The start of an id, or a part of a label or customer id, the case of letters ignored. */
  search?: string | undefined;
};

/** Which keys a page holds: after a position in creation order (or before it, newest first), filtered. */
export type KeyQuery = KeyFilter & {
  limit: number;
  after?: { createdAt: string; id: string } | undefined;
  order?: 'oldest' | 'newest' | undefined;
};

/** An admin create with an Idempotency-Key: the key and a hash of the request body. */
export type CreationRequest = { key: string; fingerprint: string };

/** What a create with a CreationRequest did. */
export type CreationOutcome =
  | { created: ApiKey & { key: string } }
  /** The same request within 24 hours: the key it created (its secret is kept nowhere). */
  | { replayed: ApiKey }
  /** The same Idempotency-Key with another body within 24 hours: nothing was created. */
  | { reused: true };

/** A rotation's answer: the new key, and until when its previous secret still opens it (null: not at all). */
export type Rotated = { key: string; previousValidUntil: string | null };

export interface KeyStore {
  /** Creates a key; the returned `key` is the only time the secret exists outside the caller. */
  create(options: KeyFields): Promise<ApiKey & { key: string }>;
  /** Creates a key once per Idempotency-Key within idempotencyWindowMs (see CreationOutcome). */
  createOnce(options: KeyFields, request: CreationRequest): Promise<CreationOutcome>;
  /** The key with this id, revoked or not. */
  get(id: string): Promise<ApiKey | undefined>;
  /** Up to `limit` keys in creation order after `after` (newest first: before it), that pass the filter. */
  page(query: KeyQuery): Promise<ApiKey[]>;
  /** How many keys pass the filter, on every page. */
  count(filter: KeyFilter): Promise<number>;
  /**
   * Sets an active key's plan, limits, label, customer, expiry and disable; undefined when there is no such
   * active key.
   */
  update(id: string, fields: Required<KeyFields>): Promise<ApiKey | undefined>;
  /**
   * The active key a bearer token names, or undefined (malformed, unknown, wrong secret, revoked). An
   * expired or disabled key is answered: the gate tells its holder why it is refused (api/identify.ts).
   */
  verify(token: string): Promise<ApiKey | undefined>;
  list(): Promise<ApiKey[]>;
  /** Revokes a key; false when there is no such active key. */
  revoke(id: string): Promise<boolean>;
  /**
   * A new secret for an active key, same id, plan and limits; the old secret keeps working for
   * `graceSeconds` (0: revoked at once), until the instant it answers. Undefined when there is no such
   * active key.
   */
  rotate(id: string, graceSeconds: number): Promise<Rotated | undefined>;
  /** Records that the key was used now. */
  touch(id: string): Promise<void>;
  isEmpty(): Promise<boolean>;
}

export type IdempotencyRecord = {
  /** A hash of the request body the key was first used with. */
  fingerprint: string;
  /** The pet created under the key; absent while the first request is in progress. */
  pet?: Pet;
};

export interface IdempotencyStore {
  /**
   * Claims the key for a request (`undefined`: claimed, go on), or returns the live record of an earlier
   * request. Records older than `expireBefore`, and claims in progress older than `abandonBefore` (their
   * request died), are replaced.
   */
  claim(
    claim: IdempotencyClaim,
    fingerprint: string,
    times: { now: number; expireBefore: number; abandonBefore: number },
  ): Promise<IdempotencyRecord | undefined>;
  /** Gives up a claim whose request created nothing (so that a retry can proceed); not one taken over. */
  release(claim: IdempotencyClaim): Promise<void>;
  /** Deletes records created before `before`. */
  prune(before: number): Promise<number>;
}

export interface Store {
  pets: PetStore;
  keys: KeyStore;
  idempotency: IdempotencyStore;
  usage: UsageStore;
  audit: AuditStore;
  /** A value kept once per store (e.g. the cursor signing secret), created on first use. */
  setting(name: string, create: () => string): Promise<string>;
  /**
   * Resolves when the store answers a real read of its tables (and, with `write`, takes a write that
   * changes nothing); rejects otherwise (readiness).
   */
  check(options?: { write?: boolean }): Promise<void>;
  close(): Promise<void>;
}
