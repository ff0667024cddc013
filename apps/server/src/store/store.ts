// What the HTTP layer and the key command see of the store, whatever engine keeps it. Every method is
// async so that a networked engine can implement it; the HTTP layer never imports an engine folder.
import type { NewPet, Pet, PetStatus } from '@animal-store/spec';
import type { Plan, Quota } from '../plans.js';

export type ApiKey = {
  id: string;
  plan: Plan;
  quota: Quota;
  label: string | null;
  createdAt: string;
  revokedAt: string | null;
  /** Last request with the key (recorded at most once a minute per instance), or null. */
  lastUsedAt: string | null;
  /** Set by `verify` when the token was the previous secret of a rotation: when its grace period ends. */
  graceEndsAt?: string;
};

export type PetPage = { pets: Pet[]; hasMore: boolean };

/** How long an Idempotency-Key is remembered (the contract: 24 hours). */
export const idempotencyWindowMs = 24 * 3_600_000;

/** One Idempotency-Key of one API key. */
export type IdempotencyScope = { apiKeyId: string; key: string };

export interface PetStore {
  /**
   * Adds a pet. `accept` sees the pet exactly as stored (read back from the engine) before the write is
   * committed; if it throws, nothing is committed and the error propagates. With `idempotency`, the
   * claimed key is completed with this pet in the same transaction.
   */
  create(
    pet: NewPet & { status: PetStatus },
    accept: (stored: Pet) => void,
    idempotency?: IdempotencyScope,
  ): Promise<Pet>;
  /** The pets with these ids (those that exist), optionally of one status, in ascending id order. */
  getMany(ids: bigint[], status?: PetStatus): Promise<Pet[]>;
  /** `id` is a BigInt so that every int64 is matched exactly (none rounds to another pet's id). */
  get(id: bigint): Promise<Pet | undefined>;
  /** One page in ascending id order after `afterId`. */
  list(options: { limit: number; status?: PetStatus; afterId: number }): Promise<PetPage>;
}

export interface KeyStore {
  /** Creates a key; the returned `key` is the only time the secret exists outside the caller. */
  create(options: { plan: Plan; quota: Quota; label?: string }): Promise<ApiKey & { key: string }>;
  /** The active key a bearer token names, or undefined (malformed, unknown, wrong secret, revoked). */
  verify(token: string): Promise<ApiKey | undefined>;
  list(): Promise<ApiKey[]>;
  /** Revokes a key; false when there is no such active key. */
  revoke(id: string): Promise<boolean>;
  /**
   * A new secret for an active key, same id, plan and limits; the old secret keeps working for
   * `graceSeconds` (0: revoked at once). Undefined when there is no such active key.
   */
  rotate(id: string, graceSeconds: number): Promise<string | undefined>;
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
    scope: IdempotencyScope,
    fingerprint: string,
    times: { now: number; expireBefore: number; abandonBefore: number },
  ): Promise<IdempotencyRecord | undefined>;
  /** Gives up a claim whose request created nothing (so that a retry can proceed). */
  release(scope: IdempotencyScope): Promise<void>;
  /** Deletes records created before `before`. */
  prune(before: number): Promise<number>;
}

export interface Store {
  pets: PetStore;
  keys: KeyStore;
  idempotency: IdempotencyStore;
  /** A value kept once per store (e.g. the cursor signing secret), created on first use. */
  setting(name: string, create: () => string): Promise<string>;
  /**
   * Resolves when the store answers a real read of its tables (and, with `write`, takes a write that
   * changes nothing); rejects otherwise (readiness).
   */
  check(options?: { write?: boolean }): Promise<void>;
  close(): Promise<void>;
}
