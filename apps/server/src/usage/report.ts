// A key's usage as the admin contract shapes it (KeyUsage): its running windows, its ban and its requests
// per UTC day; written once for the admin API's getKeyUsage and the keys command's usage. And whether a key
// is refused now, for listKeys.
import type { AdminKeyPage, KeyUsage } from '@animal-store/spec/admin';
import type { RateLimiter } from '../limits/policy.js';
import type { KeyDayCounts, UsageStore } from '../store/operator-records.js';
import type { ApiKey } from '../store/store.js';

const iso = (ms: number) => (ms > 0 ? new Date(ms).toISOString() : null);

/** Days summed by date (the store's and a process's unwritten counts of one day add up), in date order. */
function sumDays(days: KeyDayCounts[]): KeyUsage['days'] {
  const byDay = new Map<string, KeyUsage['days'][number]>();
  for (const d of days) {
    const sum = byDay.get(d.day) ?? { date: d.day, admitted: 0, limited: 0, banned: 0 };
    sum.admitted += d.admitted;
    sum.limited += d.limited;
    sum.banned += d.banned;
    byDay.set(d.day, sum);
  }
  return [...byDay.values()].sort((a, b) => a.date.localeCompare(b.date));
}

/**
 * The key's usage for the UTC days `from` to `to`: what the store has, plus `unwritten` (this process's
 * counts not written yet, usage/meter.ts) when given.
 */
export async function keyUsage(
  key: ApiKey,
  range: { from: string; to: string },
  sources: { usage: UsageStore; limiter: RateLimiter; unwritten?: KeyDayCounts[] | undefined },
): Promise<KeyUsage> {
  const [stored, windows, banMs] = await Promise.all([
    sources.usage.days(key.id, range.from, range.to),
    sources.limiter.windowUsage(key.id, key.quota),
    sources.limiter.banRemaining(key.id),
  ]);
  return {
    id: key.id,
    windows: windows.map(({ name, limit, used, reserved, remaining, resetAt }) => ({
      name,
      limit,
      used,
      reserved,
      remaining,
      resetAt: iso(resetAt),
    })),
    bannedUntil: iso(banMs > 0 ? Date.now() + banMs : 0),
    days: sumDays([...stored, ...(sources.unwritten ?? [])]),
  };
}

/** How much of a window a key has used to be named near its limit (listKeys' `nearLimit`). */
export const nearShare = 0.8;

/**
 * Where the key stands now, as its usage reads it, for a list of keys: refused (a ban, a window used up:
 * `remaining` 0; listKeys' `limited`), or else near its limit (a window at least nearShare used:
 * `nearLimit`), or neither.
 */
export async function standingNow(
  key: ApiKey,
  limiter: RateLimiter,
): Promise<{
  refused?: AdminKeyPage['limited'][number];
  near?: AdminKeyPage['nearLimit'][number];
}> {
  const [windows, banMs] = await Promise.all([
    limiter.windowUsage(key.id, key.quota),
    limiter.banRemaining(key.id),
  ]);
  const running = windows.filter((w) => w.resetAt > 0);
  const usedUp = running.filter((w) => w.remaining === 0).map((w) => w.name);
  if (banMs > 0 || usedUp.length > 0)
    return { refused: { id: key.id, bannedUntil: iso(banMs > 0 ? Date.now() + banMs : 0), usedUp } };
  const near = running
    .filter((w) => w.used >= w.limit * nearShare)
    .map((w) => ({ name: w.name, percentUsed: Math.min(99, Math.floor((100 * w.used) / w.limit)) }));
  return near.length > 0 ? { near: { id: key.id, windows: near } } : {};
}
