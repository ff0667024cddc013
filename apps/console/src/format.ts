// What the console shows, worked out without the DOM (tested in format.test.ts): numbers, times, UTC days,
// the days of a usage range (the admin API leaves out days without requests), the chart's scale, an audit
// event in words.
import type { AdminKey, AuditEvent, DayUsage } from '@animal-store/client/admin';

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

/** Whether `text` is a day of the calendar written `YYYY-MM-DD` (not 2027-02-30). */
export function isUtcDay(text: string): boolean {
  const at = Date.parse(`${text}T00:00:00Z`);
  return /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(at) && utcDay(new Date(at)) === text;
}

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

/** How long before its expiry a key's state says it is about to expire. */
export const expiringWithinMs = 7 * 86_400_000;

/**
 * Where a key stands at `now`, in a few words: revoked, disabled, expired, about to expire (within
 * expiringWithinMs: "expires 2026-12-01 …"), or active.
 */
export function keyState(
  key: Pick<AdminKey, 'revokedAt' | 'disabledAt' | 'expiresAt'>,
  now = new Date().toISOString(),
): string {
  if (key.revokedAt !== null) return 'revoked';
  if (key.disabledAt !== null) return 'disabled';
  if (key.expiresAt !== null && key.expiresAt <= now) return 'expired';
  if (key.expiresAt !== null && Date.parse(key.expiresAt) - Date.parse(now) <= expiringWithinMs)
    return `expires ${time(key.expiresAt)}`;
  return 'active';
}

/** A range's days as CSV (RFC 4180: a header line, CRLF line ends), for a spreadsheet or a billing check. */
export const usageCsv = (days: DayUsage[]) =>
  [
    'date,admitted,limited,banned',
    ...days.map((d) => `${d.date},${d.admitted},${d.limited},${d.banned}`),
    '',
  ].join('\r\n');

/** The operations an audit event can record, in the admin contract's order (checked against it below). */
export const auditOperations = ['createKey', 'updateKey', 'rotateKey', 'revokeKey', 'unbanKey'] as const;
const everyOperationListed: [Exclude<AuditEvent['operation'], (typeof auditOperations)[number]>] extends [
  never,
]
  ? true
  : false = true;
void everyOperationListed;

type Terms = NonNullable<AuditEvent['before']>;
const quoted = (text: string | null) => (text === null ? 'none' : `“${text}”`);
/** What an update changed, field by field: `plan free → pro`, … */
function changes(before: Terms, after: Terms): string[] {
  return [
    before.plan !== after.plan && `plan ${before.plan} → ${after.plan}`,
    limitsText(before) !== limitsText(after) && `limits ${limitsText(before)} → ${limitsText(after)}`,
    before.label !== after.label && `label ${quoted(before.label)} → ${quoted(after.label)}`,
    before.customerId !== after.customerId &&
      `customer ${before.customerId ?? 'none'} → ${after.customerId ?? 'none'}`,
    (before.expiresAt ?? null) !== (after.expiresAt ?? null) &&
      `expiry ${time(before.expiresAt ?? null, 'never')} → ${time(after.expiresAt ?? null, 'never')}`,
    before.disabled !== after.disabled &&
      after.disabled !== undefined &&
      (after.disabled ? 'state enabled → disabled' : 'state disabled → enabled'),
  ].filter((change): change is string => typeof change === 'string');
}

/** An audit event's change in words, as the key's history shows it. */
export function auditText(event: AuditEvent): string {
  const { before, after } = event;
  switch (event.operation) {
    case 'createKey':
      return after ? `created on ${after.plan} (${limitsText(after)})` : 'created';
    case 'updateKey': {
      const changed = before && after ? changes(before, after) : [];
      return changed.length > 0 ? `changed ${changed.join('; ')}` : 'changed nothing';
    }
    case 'rotateKey':
      return event.previousSecretValidUntil
        ? `rotated; the old secret worked until ${time(event.previousSecretValidUntil)}`
        : 'rotated; the old secret stopped at once';
    case 'revokeKey':
      return 'revoked';
    case 'unbanKey':
      return event.reset?.length ? `unbanned, and the ${event.reset.join(' and ')} started over` : 'unbanned';
  }
}
