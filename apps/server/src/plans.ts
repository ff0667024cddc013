// The plan table: the one place that says how many requests each plan allows (seed, Limits), and the one
// rule for a key's quota. The contract's description and the README repeat the table; a test checks that
// they agree.
export const planNames = ['free', 'pro', 'business', 'enterprise'] as const;
export type Plan = (typeof planNames)[number];

export type Quota = { perMinute: number; perDay: number };

/** Enterprise has no fixed quota: each enterprise key stores its own. */
export const planQuotas: Record<Exclude<Plan, 'enterprise'>, Quota> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
};

export const windowSeconds = { minute: 60, day: 86_400 } as const;
export type WindowName = keyof typeof windowSeconds;

export class QuotaError extends Error {
  override name = 'QuotaError';
}

/** How the caller names the two limits in its messages (the keys command's options by default). */
export type LimitNames = { perMinute: string; perDay: string };
const optionNames: LimitNames = { perMinute: '--per-minute', perDay: '--per-day' };

/**
 * The quota a new key of `plan` gets. Enterprise keys need both custom limits (per minute at most per day);
 * the other plans take none. Throws QuotaError with a message that names the limits as `names` says.
 */
export function quotaFor(plan: Plan, custom: Partial<Quota> = {}, names: LimitNames = optionNames): Quota {
  const { perMinute, perDay } = custom;
  const both = `${names.perMinute} and ${names.perDay}`;
  if (plan !== 'enterprise') {
    if (perMinute !== undefined || perDay !== undefined) {
      throw new QuotaError(`${both} apply to enterprise keys only; ${plan} has fixed limits`);
    }
    return planQuotas[plan];
  }
  if (perMinute === undefined || perDay === undefined) {
    throw new QuotaError(`enterprise keys need ${both}`);
  }
  if (![perMinute, perDay].every((n) => Number.isSafeInteger(n) && n >= 1)) {
    throw new QuotaError(`${both} must be positive integers`);
  }
  if (perMinute > perDay) {
    throw new QuotaError(
      `${names.perMinute} (${perMinute}) above ${names.perDay} (${perDay}) could never be reached`,
    );
  }
  return { perMinute, perDay };
}
