// The plan table: the one place that says how many requests each plan allows (seed, Limits).
// The spec's description and the README repeat it; a test checks that they agree.
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
