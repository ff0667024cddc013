// Temporary bans of keys (policy.ts decides when a 429 counts): the ban of record lives in the counter
// store (shared across instances, kept over a restart), as a mark; the bans this process has seen are
// remembered for banCacheMs (ban-cache.ts), so that a banned key's requests mostly cost no store call.
import type { Limits } from '../config.js';
import { windowSeconds } from '../plans.js';
import { BanCache } from './ban-cache.js';
import type { CounterStore } from './counter-store.js';

/** The shortest wait an answer asks (Retry-After is in whole seconds, at least 1). */
export const shortestWaitMs = 1_000;

/** The names of a key's windows and marks in the counter store. */
export const keyNames = (id: string) => ({
  minute: `minute:${id}`,
  day: `day:${id}`,
  violations: `violations:${id}`,
  ban: `ban:${id}`,
  newTerms: `new-terms:${id}`,
});

export function keyBans(store: CounterStore, ban: Limits['ban'], now: () => number) {
  const banCache = new BanCache(now);

  /** The ban of record, read from the store (remembered); while it cannot say, the bans already seen. */
  async function confirm(id: string): Promise<number> {
    let until: number;
    try {
      until = await store.endsAt(keyNames(id).ban);
    } catch {
      return banCache.known(id);
    }
    const left = until - now();
    if (left > 0) {
      banCache.set(id, left);
      return left;
    }
    banCache.forget(id);
    return 0;
  }

  return {
    confirm,
    /**
     * The key's ban, from memory: a ban seen within banCacheMs holds; an older one is confirmed with the
     * store (so `keys unban` reaches every process within that time). Bans this process has not seen are
     * confirmed at its next lease or refusal (policy.ts). From memory, the ban may have been lifted
     * elsewhere since it was confirmed (an unban, a new plan): the answer asks no wait past this process's
     * next look at the store (`atMostMs`), so that a client obeying it never waits out a lifted ban.
     */
    async banned(id: string): Promise<{ banMs: number; atMostMs?: number }> {
      if (banCache.known(id) === 0) return { banMs: 0 };
      const banMs = banCache.fresh(id);
      if (banMs === 0) return { banMs: await confirm(id) };
      return { banMs, atMostMs: Math.max(shortestWaitMs, banCache.recheckIn(id)) };
    },
    /**
     * Counts a 429 against the key; past the threshold within a minute, bans it. The count stops one past
     * the threshold, so exactly one request starts a ban, whichever instance answers it; those after it in
     * the same minute meet the ban that one started.
     */
    async violation(id: string): Promise<{ banMs: number; started: boolean }> {
      const key = keyNames(id);
      const counted = await store.take(key.violations, 1, ban.threshold + 1, windowSeconds.minute * 1000);
      if (counted.granted > 0 && counted.used <= ban.threshold) return { banMs: 0, started: false };
      const banMs = ban.seconds * 1000;
      banCache.set(id, banMs);
      if (counted.granted === 0) return { banMs, started: false };
      // Recorded in the store for every instance; while it cannot be, this instance still bans the key.
      await store.mark(key.ban, banMs).catch(() => {});
      await store.delete(key.violations).catch(() => {}); // after the ban, the key starts with a clean record
      return { banMs, started: true };
    },
    async unban(id: string): Promise<void> {
      banCache.forget(id);
      await store.delete(keyNames(id).ban);
      await store.delete(keyNames(id).violations);
    },
  };
}
