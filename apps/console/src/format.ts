// What the console shows, worked out without the DOM (tested in format.test.ts): numbers, times, UTC days,
// the days of a usage range (the admin API leaves out days without requests), the chart's scale.
import type { AdminKey, DayUsage } from '@animal-store/client/admin';

/** The plans, in the admin contract's order (the type check below fails if the contract gains one). */
export const plans = ['free', 'pro', 'business', 'enterprise'] as const;
type Listed = (typeof plans)[number];
const everyPlanListed: [Exclude<AdminKey['plan'], Listed>] extends [never] ? true : false = true;
void everyPlanListed;

const numbers = new Intl.NumberFormat('en-GB');
export const count = (n: number) => numbers.format(n);

/** A date-time as a person reads it, in UTC (the service's days are UTC days). */
export const time = (iso: string | null, none = '—') =>
  iso === null ? none : `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;

/** The UTC day of `date`, `YYYY-MM-DD`. */
export const utcDay = (date: Date) => date.toISOString().slice(0, 10);

/** The UTC day `days` after `day` (before, when negative). */
export function addDays(day: string, days: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return utcDay(date);
}

/** The contract's longest usage range, in days (getKeyUsage). */
export const maxRangeDays = 400;

/** A range's days, each with its totals (zero where the answer has none), oldest first. */
export function everyDay(from: string, to: string, days: DayUsage[]): DayUsage[] {
  const known = new Map(days.map((day) => [day.date, day]));
  const all: DayUsage[] = [];
  for (let day = from; day <= to && all.length < maxRangeDays; day = addDays(day, 1))
    all.push(known.get(day) ?? { date: day, admitted: 0, limited: 0, banned: 0 });
  return all;
}

export const requestsOf = (day: DayUsage) => day.admitted + day.limited + day.banned;

/** The chart's top: the largest day rounded up to 1, 2 or 5 times a power of ten (at least 1). */
export function scaleTop(largest: number): number {
  if (largest <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(largest));
  const step = [1, 2, 5, 10].find((m) => m * power >= largest) ?? 10;
  return step * power;
}

/** A key's limits in words. */
export const limitsText = (key: Pick<AdminKey, 'limits'>) =>
  `${count(key.limits.perMinute)} a minute, ${count(key.limits.perDay)} a day`;

/** Where a key stands: revoked, or active. */
export const keyState = (key: Pick<AdminKey, 'revokedAt'>) => (key.revokedAt === null ? 'active' : 'revoked');

/** A range's days as CSV (RFC 4180: a header line, CRLF line ends), for a spreadsheet or a billing check. */
export const usageCsv = (days: DayUsage[]) =>
  [
    'date,admitted,limited,banned',
    ...days.map((d) => `${d.date},${d.admitted},${d.limited},${d.banned}`),
    '',
  ].join('\r\n');
