// A change to a key's plan, limits, label, customer, expiry or disable, merged with what the key has:
// written once for the admin API's updateKey and the keys command's update.
import { type LimitNames, type Plan, type Quota, quotaFor } from '../plans.js';
import type { ApiKey, KeyFields } from './store.js';

/** What to change: fields left undefined keep their value; `null` clears the label, customer or expiry. */
export type KeyChange = {
  plan?: Plan | undefined;
  limits?: Partial<Quota> | undefined;
  label?: string | null | undefined;
  customerId?: string | null | undefined;
  expiresAt?: string | null | undefined;
  /** true disables the key (since now, or since it was disabled already), false enables it. */
  disabled?: boolean | undefined;
};

/**
 * The key's fields after `change`. Limits given are checked against the plan; without them an enterprise
 * key that stays enterprise keeps its own, and any other takes its plan's (so moving to enterprise needs
 * limits). Throws QuotaError, naming the limits as `names` says.
 */
export function keyAfter(
  current: ApiKey,
  change: KeyChange,
  names?: LimitNames,
  now = new Date().toISOString(),
): Required<KeyFields> {
  const plan = change.plan ?? current.plan;
  const keepsOwnLimits =
    change.limits === undefined && plan === 'enterprise' && current.plan === 'enterprise';
  return {
    plan,
    quota: keepsOwnLimits ? current.quota : quotaFor(plan, change.limits ?? {}, names),
    label: change.label === undefined ? current.label : change.label,
    customerId: change.customerId === undefined ? current.customerId : change.customerId,
    expiresAt: change.expiresAt === undefined ? current.expiresAt : change.expiresAt,
    disabledAt:
      change.disabled === undefined
        ? current.disabledAt
        : change.disabled
          ? (current.disabledAt ?? now)
          : null,
  };
}

/** Whether a key's terms (its plan or its limits) differ between two versions of it. */
export function termsDiffer(before: KeyFields, after: KeyFields): boolean {
  return (
    before.plan !== after.plan ||
    before.quota.perMinute !== after.quota.perMinute ||
    before.quota.perDay !== after.quota.perDay
  );
}

/**
 * An expiry as it is stored: `value`, an instant, in UTC ISO 8601; undefined when it is not in the future
 * (the caller says so in its own words: a 400 from the admin API, a usage error from the keys command).
 */
export function futureExpiry(value: string, now = Date.now()): string | undefined {
  const at = Date.parse(value);
  return at > now ? new Date(at).toISOString() : undefined;
}
