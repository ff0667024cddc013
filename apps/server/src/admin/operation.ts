// What every admin operation (keys/, one file per operation of spec/admin) shares: its dependencies, the
// admin view of a key, and the answers for a key that is missing, revoked or given limits its plan refuses.
import type { AdminKey } from '@animal-store/spec/admin';
import type { Request } from 'express';
import { HttpError } from '../http/http-error.js';
import type { RateLimiter } from '../limits/policy.js';
import { type Quota, QuotaError } from '../plans.js';
import { futureExpiry } from '../store/key-change.js';
import { shownKey } from '../store/shown-key.js';
import type { ApiKey, Store } from '../store/store.js';
import type { UsageMeter } from '../usage/meter.js';
import type { Audit } from './audit.js';

export type AdminDeps = {
  store: Pick<Store, 'keys' | 'usage' | 'audit'>;
  limiter: RateLimiter;
  /** This process's meter: its counts not written yet are added to what the store has. */
  meter?: Pick<UsageMeter, 'unwritten'>;
  audit: Audit;
};

/** A key's quota as the admin contract's Limits. */
export const limitsOf = (quota: Quota): AdminKey['limits'] => ({
  perMinute: quota.perMinute,
  perDay: quota.perDay,
});

/** A key as the admin contract shows it (AdminKey): never its secret. */
export const view = (k: ApiKey): AdminKey => ({
  ...shownKey(k),
  limits: limitsOf(k.quota),
  previousSecretValidUntil:
    k.previousValidUntil !== null && k.previousValidUntil > new Date().toISOString()
      ? k.previousValidUntil
      : null,
});

/**
 * An expiry a create or an update may set: null (never), or an instant still to come, written as the
 * service writes instants (ISO 8601, UTC, milliseconds). One already past is a 400 naming the field.
 */
export function expiryChecked(expiresAt: string | null | undefined): string | null | undefined {
  if (expiresAt === undefined || expiresAt === null) return expiresAt;
  const at = futureExpiry(expiresAt);
  if (!at) throw new HttpError(400, `body.expiresAt must be in the future (${expiresAt} is not).`);
  return at;
}

/** The request fields a QuotaError names. */
export const limitNames = { perMinute: 'limits.perMinute', perDay: 'limits.perDay' };

/** What `decide` answers; limits that do not fit the plan (a QuotaError) are a 400 that says why. */
export function limitsChecked<T>(decide: () => T): T {
  try {
    return decide();
  } catch (error) {
    if (error instanceof QuotaError) throw new HttpError(400, `${error.message}.`);
    throw error;
  }
}

export const keyIdOf = (req: Request) => String(req.params.keyId);
export const noKey = (id: string) => new HttpError(404, `Key ${id} was not found.`);
/** A key that cannot be changed: revoked, or missing. */
export const noActiveKey = (id: string, key: ApiKey | undefined) =>
  key ? new HttpError(404, `Key ${id} is revoked: it cannot be changed.`) : noKey(id);
