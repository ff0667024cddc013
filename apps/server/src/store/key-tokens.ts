// The API key format, shared by every engine. A key reads `as_<id>_<secret>`: the id is public (it names
// the key in listings and logs), the secret is 256 random bits stored only as a SHA-256 hash (a fast hash
// suffices for random secrets) and compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Plan, Quota } from '../plans.js';
import { searchText } from './key-query.js';
import { type KeyRow, toKey } from './rows.js';
import type { ApiKey, CreationRequest, KeyFields } from './store.js';

const keyPattern = /^as_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;
const hash = (secret: string) => createHash('sha256').update(secret).digest();
const decoy = hash('decoy');

/** A new key (or, given an id, a new secret for that key). */
export function newKeyToken(id = randomBytes(6).toString('hex')): {
  id: string;
  token: string;
  secretHash: Buffer;
} {
  const secret = randomBytes(32).toString('base64url');
  return { id, token: `as_${id}_${secret}`, secretHash: hash(secret) };
}

/** A rotation of key `id`: its new secret, and until when the previous one still opens it (null: not at all). */
export function newRotation(id: string, graceSeconds: number, now = Date.now()) {
  const { token, secretHash } = newKeyToken(id);
  const previousValidUntil = graceSeconds > 0 ? new Date(now + graceSeconds * 1000).toISOString() : null;
  return { token, secretHash, previousValidUntil };
}

/** The id and secret a token names, or undefined when it is not shaped like a key. */
export function parseKeyToken(token: string): { id: string; secret: string } | undefined {
  const match = keyPattern.exec(token);
  return match ? { id: match[1] as string, secret: match[2] as string } : undefined;
}

/** Constant-time check of a secret against a stored hash (a decoy when there is no such key). */
export const secretMatches = (secret: string, stored: Buffer | undefined): boolean =>
  timingSafeEqual(hash(secret), stored ?? decoy) && stored !== undefined;

type SecretRow = {
  secret_hash: Buffer;
  revoked_at: string | null;
  previous_secret_hash: Buffer | null;
  previous_valid_until: string | null;
};

/**
 * Which secret of an active key a secret is: its current one, or the previous one within its grace period;
 * undefined when it opens nothing. One constant-time comparison whatever the answer, except for the
 * previous secret of a key in its grace period (a second one).
 */
function matchedSecret(
  secret: string,
  row: SecretRow | undefined,
  now = new Date().toISOString(),
): 'current' | 'previous' | undefined {
  if (!row || row.revoked_at !== null) {
    secretMatches(secret, undefined); // the same work as for a real key: no timing difference
    return undefined;
  }
  if (secretMatches(secret, row.secret_hash)) return 'current';
  const graced = row.previous_secret_hash !== null && (row.previous_valid_until ?? '') > now;
  return graced && secretMatches(secret, row.previous_secret_hash ?? undefined) ? 'previous' : undefined;
}

/** Whether a secret opens an active key: its current secret, or the previous one within its grace period. */
export const matches = (secret: string, row: SecretRow | undefined, now?: string): row is SecretRow =>
  matchedSecret(secret, row, now) !== undefined;

/**
 * The active key a secret opens, or undefined. Opened by the previous secret within its grace period, the
 * key says when that ends (`graceEndsAt`), so that nothing remembers it past then (key-cache.ts).
 */
export function openedKey(secret: string, row: KeyRow | undefined): ApiKey | undefined {
  const matched = matchedSecret(secret, row);
  if (!matched || !row) return undefined;
  const key = toKey(row);
  if (matched === 'previous' && row.previous_valid_until !== null) key.graceEndsAt = row.previous_valid_until;
  return key;
}

/** The active key a token opens (verify, in every engine), its row read by `rowOf`; or undefined. */
export async function verifyToken(
  token: string,
  rowOf: (id: string) => KeyRow | undefined | Promise<KeyRow | undefined>,
): Promise<ApiKey | undefined> {
  const parsed = parseKeyToken(token);
  return parsed && openedKey(parsed.secret, await rowOf(parsed.id));
}

/** The limits a key's row stores: only enterprise keys have their own (the others take their plan's). */
export const storedLimits = (plan: Plan, quota: Quota): [number | null, number | null] =>
  plan === 'enterprise' ? [quota.perMinute, quota.perDay] : [null, null];

/**
 * When a new key is created, strictly after the last key this process created: listKeys pages in creation
 * order (created_at, then id), and two keys created in one millisecond would otherwise be ordered by their
 * random ids. Across instances, keys of one millisecond are ordered by id (the admin contract says so).
 */
let lastCreated = 0;
function creationTime(): string {
  lastCreated = Math.max(Date.now(), lastCreated + 1);
  return new Date(lastCreated).toISOString();
}

/** The api_keys columns a new key sets, in the order of newKeyRow's values. */
export const newKeyColumns =
  'id, secret_hash, plan, per_minute, per_day, label, customer_id, created_at, creation_request, creation_fingerprint, expires_at, search_text';

/**
 * A new key and the values of its api_keys row, in the order of newKeyColumns: the same for every engine.
 * With a CreationRequest, its Idempotency-Key and body hash are kept with the row (see KeyStore.createOnce).
 */
export function newKeyRow(options: KeyFields, request?: CreationRequest) {
  const { id, token, secretHash } = newKeyToken();
  const values = [
    id,
    secretHash,
    options.plan,
    ...storedLimits(options.plan, options.quota),
    options.label ?? null,
    options.customerId ?? null,
    creationTime(),
    request?.key ?? null,
    request?.fingerprint ?? null,
    options.expiresAt ?? null,
    searchText(options.label, options.customerId),
  ] as const;
  return { id, token, values };
}
