// What every admin operation (keys/, one file per operation of spec/admin) shares: its dependencies, the
// admin view of a key, and the answers for a key that is missing, revoked or given limits its plan refuses.
import type { AdminKey } from '@animal-store/spec/admin';
import type { Request, Response } from 'express';
import { HttpError } from '../http/http-error.js';
import type { RateLimiter } from '../limits/policy.js';
import { QuotaError } from '../plans.js';
import type { ApiKey, Store } from '../store/store.js';
import type { UsageMeter } from '../usage/meter.js';
import type { Audit } from './audit.js';

export type AdminDeps = {
  store: Pick<Store, 'keys' | 'usage'>;
  limiter: RateLimiter;
  /** This process's meter: its counts not written yet are added to what the store has. */
  meter?: Pick<UsageMeter, 'unwritten'>;
  audit: Audit;
};

/** A key as the admin contract shows it (AdminKey): never its secret. */
export const view = (k: ApiKey): AdminKey => ({
  id: k.id,
  plan: k.plan,
  limits: { perMinute: k.quota.perMinute, perDay: k.quota.perDay },
  label: k.label,
  customerId: k.customerId,
  createdAt: k.createdAt,
  revokedAt: k.revokedAt,
  lastUsedAt: k.lastUsedAt,
});

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

/** Who changed which key by which operation, for the audit trail. */
export const changeOf = (req: Request, res: Response, operation: string) => ({
  operation,
  adminToken: res.locals.adminToken as string,
  keyId: keyIdOf(req),
});
