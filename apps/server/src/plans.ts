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

export const windows = { minute: 60, day: 86_400 } as const;
export type WindowName = keyof typeof windows;

export class QuotaError extends Error {}

/**
 * The quota a new key of `plan` gets. Enterprise keys need both custom limits (per minute at most per day);
 * the other plans take none. Throws QuotaError with a message for the operator.
 */
export function quotaFor(plan: Plan, custom: Partial<Quota> = {}): Quota {
  const { perMinute, perDay } = custom;
  if (plan !== 'enterprise') {
    if (perMinute !== undefined || perDay !== undefined) {
      throw new QuotaError(
        `--per-minute and --per-day apply to enterprise keys only; ${plan} has fixed limits`,
      );
    }
    return planQuotas[plan];
  }
  if (perMinute === undefined || perDay === undefined) {
    throw new QuotaError('enterprise keys need --per-minute and --per-day');
  }
  if (![perMinute, perDay].every((n) => Number.isSafeInteger(n) && n >= 1)) {
    throw new QuotaError('--per-minute and --per-day must be positive integers');
  }
  if (perMinute > perDay) {
    throw new QuotaError(`--per-minute (${perMinute}) above --per-day (${perDay}) could never be reached`);
  }
  return { perMinute, perDay };
}
