// The rate-limit policy, written once over any counter store: two fixed windows per key (minute, then
// day), a per-address minute window without a key, and the temporary ban of a key that keeps sending
// while limited. The windows themselves (fixed, starting at a subject's first request, atomic in the
// store) are rate-limiter-flexible's; see counters.ts for the stores.
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Limits } from '../config.js';
import { type WindowName, windows } from '../plans.js';
import { BanCache } from './ban-cache.js';
import type { Counters } from './counters.js';

export type WindowState = {
  name: WindowName;
  limit: number;
  remaining: number;
  /** Milliseconds until the window resets (a full window when it has not started). */
  resetMs: number;
};

export type Decision =
  | { allowed: true; windows: WindowState[] }
  | {
      allowed: false;
      code: 'rate_limited' | 'temporarily_banned';
      retryAfterMs: number;
      /** As the client is told them: every exhausted window (all, during a ban) resets after retryAfterMs. */
      windows: WindowState[];
      /** Set on the request whose 429 started the ban. */
      banStarted?: true;
    };

export type Subject =
  | { kind: 'key'; id: string; perMinute: number; perDay: number }
  | { kind: 'address'; address: string };

/** What the HTTP layer sees (one decision per request), and what operators need (bans). */
export interface RateLimiter {
  consume(subject: Subject): Promise<Decision>;
  /** Milliseconds left in the key's ban, 0 when it is not banned. */
  banRemaining(id: string): Promise<number>;
  /** Ends the key's ban and clears its record of violations. */
  unban(id: string): Promise<void>;
}

export type LimiterOptions = Limits;

/**
 * How long until a request would be admitted: the longest reset among the exhausted windows (a key out of
 * both its minute and its day waits for the day, not the minute).
 */
const untilAdmitted = (states: WindowState[]): number =>
  Math.max(0, ...states.filter((s) => s.remaining <= 0).map((s) => s.resetMs));

/**
 * A refusal, the one way each is built: the wait is the longest exhausted window or the ban (`banMs`), and
 * the windows are shown as the client should read them, every one naming that same wait. An exhausted
 * window resets (for this client) only when a request would be admitted again, and during a ban no window
 * has anything left until the ban ends.
 */
function refused(states: WindowState[], banMs = 0, banStarted = false): Decision {
  const retryAfterMs = Math.max(banMs, untilAdmitted(states));
  const banned = banMs > 0;
  return {
    allowed: false,
    code: banned ? 'temporarily_banned' : 'rate_limited',
    retryAfterMs,
    windows: states.map((s) =>
      banned || s.remaining <= 0 ? { ...s, remaining: 0, resetMs: retryAfterMs } : s,
    ),
    ...(banStarted && { banStarted: true as const }),
  };
}

/** A counter rejected the request (over its limit) as opposed to failing (store down): rethrow failures. */
const rejected = (error: unknown): RateLimiterRes => {
  if (error instanceof RateLimiterRes) return error;
  throw error;
};

export function createRateLimiter(counters: Counters, options: LimiterOptions, now = Date.now): RateLimiter {
  const violations = counters('violations', options.ban.threshold, windows.minute);
  // The ban of record fails rather than fall back to an empty memory while its store is out: see banned().
  const bans = counters('ban', 1, options.ban.seconds, { insured: false });
  // Fast path only: the ban of record is in the store, shared by every instance and kept on restart.
  const banCache = new BanCache(now);

  const state = (name: WindowName, limit: number, res: RateLimiterRes | null): WindowState => ({
    name,
    limit,
    remaining: res ? res.remainingPoints : limit,
    resetMs: res && res.msBeforeNext >= 0 ? res.msBeforeNext : windows[name] * 1000,
  });

  /** Milliseconds left in the key's ban, 0 when it is not banned. */
  async function banned(id: string): Promise<number> {
    const cached = banCache.fresh(id);
    if (cached > 0) return cached;
    let ban: RateLimiterRes | null;
    try {
      ban = await bans.get(id);
    } catch {
      return banCache.known(id); // the store cannot say: honour the bans this process has seen
    }
    if (ban && ban.consumedPoints > 1 && ban.msBeforeNext > 0) {
      banCache.set(id, ban.msBeforeNext);
      return ban.msBeforeNext;
    }
    banCache.forget(id);
    return 0;
  }

  /** Counts a 429 against the key; past the threshold within a minute, bans it. Returns the ban length. */
  async function violation(id: string): Promise<number> {
    try {
      await violations.consume(id);
      return 0;
    } catch (error) {
      rejected(error);
      banCache.set(id, options.ban.seconds * 1000);
      // Recorded in the store for every instance; while it cannot be, this instance still bans the key.
      await bans.block(id, options.ban.seconds).catch(() => {});
      await violations.delete(id); // after the ban, the key starts with a clean record
      return options.ban.seconds * 1000;
    }
  }

  async function limited(id: string, states: WindowState[]): Promise<Decision> {
    const banMs = await violation(id);
    return refused(states, banMs, banMs > 0);
  }

  async function consumeKey(subject: Extract<Subject, { kind: 'key' }>): Promise<Decision> {
    const minute = counters('minute', subject.perMinute, windows.minute);
    const day = counters('day', subject.perDay, windows.day);
    const both = async (m: RateLimiterRes | null, d: RateLimiterRes | null) => [
      state('minute', subject.perMinute, m ?? (await minute.get(subject.id))),
      state('day', subject.perDay, d ?? (await day.get(subject.id))),
    ];
    const banMs = await banned(subject.id);
    if (banMs > 0) return refused(await both(null, null), banMs);
    // Minute first, and the day only when the minute admitted: a minute rejection must not burn day quota.
    let minuteRes: RateLimiterRes;
    try {
      minuteRes = await minute.consume(subject.id);
    } catch (error) {
      const res = rejected(error);
      return limited(subject.id, await both(res, null));
    }
    try {
      const dayRes = await day.consume(subject.id);
      return { allowed: true, windows: await both(minuteRes, dayRes) };
    } catch (error) {
      const res = rejected(error);
      const refunded = await minute.reward(subject.id); // the request did not count after all
      return limited(subject.id, await both(refunded, res));
    }
  }

  async function consumeAddress(address: string): Promise<Decision> {
    const minute = counters('address', options.anonymousPerMinute, windows.minute);
    try {
      const res = await minute.consume(address);
      return { allowed: true, windows: [state('minute', options.anonymousPerMinute, res)] };
    } catch (error) {
      return refused([state('minute', options.anonymousPerMinute, rejected(error))]);
    }
  }

  return {
    consume: (subject) => (subject.kind === 'key' ? consumeKey(subject) : consumeAddress(subject.address)),
    banRemaining: banned,
    async unban(id) {
      banCache.forget(id);
      await bans.delete(id);
      await violations.delete(id);
    },
  };
}
