// The API key format, shared by every engine. A key reads `as_<id>_<secret>`: the id is public (it names
// the key in listings and logs), the secret is 256 random bits stored only as a SHA-256 hash (a fast hash
// suffices for random secrets) and compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Plan, Quota } from '../plans.js';
import { type KeyRow, toKey } from './rows.js';
import type { ApiKey } from './store.js';

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

/** The id and secret a token names, or undefined when it is not shaped like a key. */
export function parseKeyToken(token: string): { id: string; secret: string } | undefined {
  const match = keyPattern.exec(token);
  return match ? { id: match[1] as string, secret: match[2] as string } : undefined;
}

/** Constant-time check of a secret against a stored hash (a decoy when there is no such key). */
export const secretMatches = (secret: string, stored: Buffer | undefined): boolean =>
  timingSafeEqual(hash(secret), stored ?? decoy) && stored !== undefined;

/** Whether a secret opens an active key: its current secret, or the previous one within its grace period. */
export function matches(
  secret: string,
  row:
    | {
        secret_hash: Buffer;
        revoked_at: string | null;
        previous_secret_hash: Buffer | null;
        previous_valid_until: string | null;
      }
    | undefined,
  now = new Date().toISOString(),
): row is NonNullable<typeof row> {
  if (!row || row.revoked_at !== null) {
    secretMatches(secret, undefined); // the same work as for a real key: no timing difference
    return false;
  }
  if (secretMatches(secret, row.secret_hash)) return true;
  return (
    row.previous_secret_hash !== null &&
    (row.previous_valid_until ?? '') > now &&
    secretMatches(secret, row.previous_secret_hash)
  );
}

/**
 * The active key a secret opens, or undefined. Opened by the previous secret within its grace period, the
 * key says when that ends (`graceEndsAt`), so that nothing remembers it past then (key-cache.ts).
 */
export function openedKey(secret: string, row: KeyRow | undefined): ApiKey | undefined {
  if (!matches(secret, row)) return undefined;
  const key = toKey(row);
  // Which secret matched, without a second comparison: the current one, unless only the previous could.
  if (row.previous_valid_until !== null && !secretMatches(secret, row.secret_hash)) {
    key.graceEndsAt = row.previous_valid_until;
  }
  return key;
}

/**
 * A new key and the values of its api_keys row, in column order (id, secret_hash, plan, per_minute,
 * per_day, label, created_at): the same for every engine. Only enterprise keys store their own limits.
 */
export function newKeyRow(options: { plan: Plan; quota: Quota; label?: string | undefined }) {
  const { id, token, secretHash } = newKeyToken();
  const custom = options.plan === 'enterprise';
  const values = [
    id,
    secretHash,
    options.plan,
    custom ? options.quota.perMinute : null,
    custom ? options.quota.perDay : null,
    options.label ?? null,
    new Date().toISOString(),
  ] as const;
  return { id, token, values };
}
