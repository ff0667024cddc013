// The rate-limit policy, written once over any counter store (counter-store.ts): two fixed windows per key
// (minute, then day), a per-address minute window without a key, and the temporary ban of a key that keeps
// sending while limited. A request is admitted from this process's leases (leases.ts) without asking the
// store; the store is asked once per lease, and the key's bans are known from the ban list (bans.ts), or,
// without an up-to-date one, confirmed before each lease.
// Written by hand: docs/decisions.md#leases. Each engine implements the counter store's operations.
import { propagationMs } from '../bounds.js';
import type { Limits } from '../config.js';
import { type WindowName, windowSeconds } from '../plans.js';
import { keyBans, keyNames, shortestWaitMs } from './bans.js';
import type { CounterStore } from './counter-store.js';
import { admittedCount, leasedCount } from './lease-reports.js';
import { holdMs, recheckMs } from './lease-terms.js';
import { Leases, type WindowView } from './leases.js';

/** A key's (or an address's) window in a decision: the window as leases.ts sees it, named. */
export type WindowState = { name: WindowName } & WindowView;

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

/** A key's window as operators see it (admin API): what has been admitted of it, and when it ends. */
export type WindowUsage = {
  name: WindowName;
  limit: number;
  /**
   * Requests admitted in the window: this process's exactly, every other instance's as of its last report
   * (every propagation bound, bounds.ts); the same whichever instance answers once they have reported.
   */
  used: number;
  /** Points instances have leased from the window and not reported as admitted (leases.ts). */
  reserved: number;
  /** `limit − used`: what the key may still be admitted in the window. */
  remaining: number;
  /** When the window ends (epoch milliseconds), or 0 when none runs. */
  resetAt: number;
};

/** What the HTTP layer sees (one decision per request), and what operators need (bans, windows). */
export interface RateLimiter {
  consume(subject: Subject): Promise<Decision>;
  /**
   * `consume`'s decision when it needs neither the store nor a wait (the common path, without a promise):
   * a key that this process knows unbanned, with a point of both windows held in its leases; else
   * undefined, and nothing is counted.
   */
  admitInMemory(subject: Subject): Decision | undefined;
  /** The key's running windows under `quota`, read from the store without counting anything. */
  windowUsage(id: string, quota: { perMinute: number; perDay: number }): Promise<WindowUsage[]>;
  /** Milliseconds left in the key's ban of record, 0 when it is not banned. */
  banRemaining(id: string): Promise<number>;
  /** The ids of the keys banned now, on any instance (the store's ban list, each ban of record confirmed). */
  bannedNow(): Promise<string[]>;
  /** Ends the key's ban and clears its record of violations. */
  unban(id: string): Promise<void>;
  /**
   * Starts the key's `windows` over now (each once, however often named): each process takes from a fresh window (with the whole limit)
   * at its next look at the store, within recheckMs where it was refused. What was admitted in the old
   * windows stays in the usage per day (usage/meter.ts), not in the windows.
   */
  resetWindows(id: string, windows: WindowName[]): Promise<void>;
  /**
   * The key's plan or limits changed: its ban (earned under the old terms) ends, and for the propagation
   * bound (bounds.ts: the time every instance takes to see the new terms) no instance bans it again, since
   * one still applying the old limits would judge it by them. It is still refused (429) past whatever
   * limits an instance applies.
   */
  termsChanged(id: string): Promise<void>;
  /** Reports what this process admitted, gives its unused leases back (a graceful stop), stops its timers. */
  close(): Promise<void>;
}

export type LimiterOptions = Limits;

/** How often a process reports what its windows admitted: within the propagation bound, as usage counts. */
export const reportMs = propagationMs;

/**
 * How long until a request would be admitted: the longest reset among the exhausted windows (a key out of
 * both its minute and its day waits for the day, not the minute).
 */
const untilAdmitted = (states: WindowState[], now: number): number =>
  Math.max(0, ...states.filter((s) => s.remaining <= 0).map((s) => s.resetAt - now));

/**
 * A refusal, the one way each is built: the wait is the longest exhausted window or the ban (`banMs`), and
 * the windows are shown as the client should read them, every one naming that same wait. An exhausted
 * window resets (for this client) only when a request would be admitted again, and during a ban no window
 * has anything left until the ban ends. `atMostMs`: the longest wait Retry-After may ask, when what it
 * knows may change sooner (points held elsewhere, a ban answered from memory, a key's new terms on their
 * way to every instance); the windows still name the real wait.
 */
function refused(
  states: WindowState[],
  now: number,
  { banMs = 0, banStarted = false, atMostMs = Number.POSITIVE_INFINITY } = {},
): Decision {
  const untilMs = Math.max(banMs, untilAdmitted(states, now));
  const banned = banMs > 0;
  return {
    allowed: false,
    code: banned ? 'temporarily_banned' : 'rate_limited',
    retryAfterMs: Math.min(atMostMs, untilMs),
    // The windows' resets are the real ones even when Retry-After asks less (points held elsewhere may
    // come back sooner, new terms may arrive): a client reading them learns when the window ends.
    windows: states.map((s) =>
      banned || s.remaining <= 0 ? { ...s, remaining: 0, resetAt: now + untilMs } : s,
    ),
    ...(banStarted && { banStarted: true as const }),
  };
}

const ms = (name: WindowName) => windowSeconds[name] * 1000;
/** The windows with the one that refused shown exhausted, whatever points held elsewhere may bring back. */
const exhausted = (states: WindowState[], name: WindowName): WindowState[] =>
  states.map((s) => (s.name === name ? { ...s, remaining: 0 } : s));
const state = (name: WindowName, { limit, remaining, resetAt }: WindowView): WindowState => ({
  name,
  limit,
  remaining,
  resetAt,
});

/** What a refusal of a key reads of the store, as of `at`: its ban of record, its new terms, its day. */
type RefusalContext = {
  at: number;
  banUntil: number;
  termsEnd: number;
  day: { usedUpUntil: number; view?: WindowView } | undefined;
};

/**
 * A 429 of the key's windows. While points of a refused window are still held in other processes' leases
 * (`heldMs`) at a request's last look (lookAgain), they may come back within a second: the answer asks a
 * wait of 1 s (the process asks the store again by then, leases.ts), and is not the client's fault (no
 * violation counted). A minute refusal
 * reads the day too (`day`): a key out of both is told the day's reset by every process, not only by
 * the one whose lease found the day used.
 *
 * What a refusal reads of the store is read once per recheckMs per key and window, as the refused window
 * itself is (leases.ts), and the violations are counted in memory and added in batches (bans.ts): a
 * limited key's refusals cost no store call each, so a client hammering past its limit costs the store
 * what an obedient one does. A ban another instance started, or new terms, are seen within recheckMs.
 */
function limitedKey(store: CounterStore, bans: ReturnType<typeof keyBans>, now: () => number) {
  const contexts = new Map<string, RefusalContext>();
  async function contextOf(
    id: string,
    dayInStore: (() => Promise<{ usedUpUntil: number; view?: WindowView }>) | undefined,
  ): Promise<RefusalContext> {
    const name = `${id}:${dayInStore ? 'minute' : 'day'}`;
    const known = contexts.get(name);
    if (known && now() - known.at < recheckMs) return known;
    // Another instance may have banned the key (this one answered from its own leases since): that ban is
    // the answer, and nothing is counted, so one ban is raised once across the instances, at the threshold.
    // While the key's new terms reach every instance, this one may still apply the old limits: the 429 is
    // not counted, and asks no wait past the terms' arrival. All asked of the store at once.
    const at = now();
    const [ban, termsEnd, day] = await Promise.all([
      bans.confirm(id),
      store.endsAt(keyNames(id).newTerms).catch(() => 0),
      dayInStore?.().catch(() => undefined),
    ]);
    const context = { at, banUntil: ban > 0 ? at + ban : 0, termsEnd, day };
    contexts.set(name, context);
    return context;
  }
  const refuse = async (
    id: string,
    refusedStates: WindowState[],
    heldMs: number,
    dayInStore?: () => Promise<{ usedUpUntil: number; view?: WindowView }>,
  ): Promise<Decision> => {
    const { banUntil, termsEnd, day } = await contextOf(id, dayInStore);
    const dayOut = (day?.usedUpUntil ?? 0) > now();
    const states = refusedStates.map((s) => {
      if (s.name !== 'day' || !day) return s;
      if (dayOut) return { ...s, remaining: 0, resetAt: day.usedUpUntil };
      return day.view ? { ...s, ...day.view } : s;
    });
    const ban = banUntil - now();
    if (ban > 0) return refused(states, now(), { banMs: ban });
    if (heldMs > 0 && !dayOut) return refused(states, now(), { atMostMs: shortestWaitMs });
    const settling = termsEnd - now();
    if (settling > 0) return refused(states, now(), { atMostMs: Math.max(shortestWaitMs, settling) });
    const { banMs, started } = await bans.violation(id, untilAdmitted(states, now()));
    return refused(states, now(), { banMs, banStarted: started });
  };
  return {
    refuse,
    /** The key's terms, windows or ban changed here: its next refusal reads the store. */
    forget(id: string) {
      contexts.delete(`${id}:minute`);
      contexts.delete(`${id}:day`);
    },
    /** Forgets what is past reuse (memory stays bounded by the keys refused now). */
    sweep() {
      for (const [name, context] of contexts) if (now() - context.at >= recheckMs) contexts.delete(name);
    },
  };
}

export function createRateLimiter(
  store: CounterStore,
  options: LimiterOptions,
  now = () => Date.now(),
): RateLimiter {
  const leases = new Leases(store, now);
  const bans = keyBans(store, options.ban, now);
  const limited = limitedKey(store, bans, now);
  const sweeper = setInterval(() => {
    leases.sweep();
    bans.sweep();
    limited.sweep();
  }, ms('minute'));
  sweeper.unref();
  const reporter = setInterval(() => void leases.report(), reportMs);
  reporter.unref();
  const lister = setInterval(() => void bans.readList(), recheckMs);
  lister.unref();
  void bans.readList();

  /**
   * A take refused while points of the window are held in other processes' leases (`heldMs`, at most
   * holdMs) cannot tell yet whether they come back: the request waits until they would, and is decided
   * again, so that its answer is an admission or the real wait (the window's end), not a guess of a second
   * that a pool's every client met at each window's end. Points given back may be taken by another process
   * before the look (a new hold): looked at again, up to `looks` times in all; on the last, a window still
   * held is answered as it reads, 1 s.
   */
  const looks = 3;
  const lookAgain = async <T>(heldMs: number, decide: () => Promise<T>): Promise<T> => {
    await new Promise((resolve) => setTimeout(resolve, Math.min(heldMs, holdMs)));
    return decide();
  };

  async function consumeKey(subject: Extract<Subject, { kind: 'key' }>, look = 1): Promise<Decision> {
    const key = keyNames(subject.id);
    const peek = () => [
      state('minute', leases.peek(key.minute, subject.perMinute, ms('minute'))),
      state('day', leases.peek(key.day, subject.perDay, ms('day'))),
    ];
    const ban = await bans.banned(subject.id);
    if (ban.banMs > 0) return refused(peek(), now(), ban);
    if (!leases.decidesInMemory(key.minute, subject.perMinute)) {
      // About to ask the store for a lease: the key's ban first (set by another process, or before a
      // restart), from the ban list or, without an up-to-date one, from the store (bans.ts). First, so that
      // a process never holds leased points of a banned key.
      const ban = await bans.beforeTake(subject.id);
      if (ban > 0) return refused(peek(), now(), { banMs: ban });
    }
    // Minute first, and the day only when the minute admitted: a minute refusal must not burn day quota.
    const minute = await leases.take(key.minute, subject.perMinute, ms('minute'));
    if (!minute.admitted && minute.heldMs > 0 && look < looks)
      return lookAgain(minute.heldMs, () => consumeKey(subject, look + 1));
    if (!minute.admitted) {
      const [, day] = peek();
      // The day as the store has it where this process never took from it (its own view would show the
      // whole day left, as if the key had not been used); else what it knew at its last take.
      const knowsDay = leases.knows(key.day, subject.perDay);
      return limited.refuse(
        subject.id,
        [{ ...state('minute', minute), remaining: 0 }, day as WindowState],
        minute.heldMs,
        async () => {
          const inStore = await leases.inStore(key.day, subject.perDay, ms('day'));
          return knowsDay ? { usedUpUntil: inStore.usedUpUntil } : inStore;
        },
      );
    }
    const day = await leases.take(key.day, subject.perDay, ms('day'));
    if (!day.admitted) {
      leases.untake(key.minute); // the request did not count after all
      if (day.heldMs > 0 && look < looks) return lookAgain(day.heldMs, () => consumeKey(subject, look + 1));
      return limited.refuse(subject.id, exhausted(peek(), 'day'), day.heldMs);
    }
    return { allowed: true, windows: [state('minute', minute), state('day', day)] };
  }

  async function consumeAddress(address: string, look = 1): Promise<Decision> {
    const taken = await leases.take(`address:${address}`, options.anonymousPerMinute, ms('minute'));
    if (!taken.admitted && taken.heldMs > 0 && look < looks)
      return lookAgain(taken.heldMs, () => consumeAddress(address, look + 1));
    if (taken.admitted) return { allowed: true, windows: [state('minute', taken)] };
    const states = exhausted([state('minute', taken)], 'minute');
    return refused(states, now(), {
      atMostMs: taken.heldMs > 0 ? shortestWaitMs : undefined,
    });
  }

  function admitInMemory(subject: Subject): Decision | undefined {
    if (subject.kind !== 'key' || !bans.clearInMemory(subject.id)) return undefined;
    const key = keyNames(subject.id);
    const minute = leases.held(key.minute, subject.perMinute);
    const day = minute && leases.held(key.day, subject.perDay);
    if (!minute || !day) return undefined;
    return {
      allowed: true,
      windows: [state('minute', leases.admitHeld(minute)), state('day', leases.admitHeld(day))],
    };
  }

  return {
    consume: (subject) => (subject.kind === 'key' ? consumeKey(subject) : consumeAddress(subject.address)),
    admitInMemory,
    banRemaining: bans.confirm,
    bannedNow: bans.bannedNow,
    windowUsage: (id, quota) => windowUsage(store, leases, id, quota),
    async unban(id) {
      limited.forget(id);
      await bans.unban(id);
    },
    async resetWindows(id, windows) {
      const key = keyNames(id);
      // Until every process has looked at the store again, one may still refuse from its memory of the old
      // window: as after new terms, such a refusal counts toward no ban and asks no wait past the bound.
      await store.mark(key.newTerms, propagationMs);
      limited.forget(id);
      for (const name of new Set(windows)) {
        const window = key[name];
        await Promise.all([window, admittedCount(window), leasedCount(window)].map((n) => store.delete(n)));
        leases.forget(window);
      }
    },
    async termsChanged(id) {
      await store.mark(keyNames(id).newTerms, propagationMs);
      limited.forget(id);
      await bans.unban(id);
    },
    async close() {
      clearInterval(sweeper);
      clearInterval(reporter);
      clearInterval(lister);
      await bans.flush();
      await leases.report();
      await leases.release();
    },
  };
}

/**
 * A key's running windows as operators read them: what was admitted (reported by every process) apart from
 * what processes hold in leases (reserved).
 */
async function windowUsage(
  store: CounterStore,
  leases: Leases,
  id: string,
  quota: { perMinute: number; perDay: number },
): Promise<WindowUsage[]> {
  const key = keyNames(id);
  const read = async (name: WindowName, counter: string, limit: number): Promise<WindowUsage> => {
    const [taken, reported, leased] = await Promise.all([
      store.read(counter),
      store.read(admittedCount(counter)),
      store.read(leasedCount(counter)),
    ]);
    // The counts end with their window; one outliving it (by a clock tick) is not this window's.
    const own = taken.resetAt > 0 ? leases.unreported(counter) : { admitted: 0, leased: 0 };
    const admitted = taken.resetAt > 0 ? reported.used + own.admitted : 0;
    const leasedAll = taken.resetAt > 0 ? leased.used + own.leased : 0;
    // Reserved: what processes leased and report, and have not used. Everything else the window counts
    // was used: admitted, or taken by a process that reports nothing (a release before 2.0, during a
    // rolling upgrade), whose unused points are then counted as used, never the other way round.
    const reserved = Math.min(taken.used, Math.max(0, leasedAll - admitted));
    const used = taken.used - reserved;
    return { name, limit, used, reserved, remaining: Math.max(0, limit - used), resetAt: taken.resetAt };
  };
  const [minute, day] = await Promise.all([
    read('minute', key.minute, quota.perMinute),
    read('day', key.day, quota.perDay),
  ]);
  return [minuteWithinDay(minute, day), day];
}

/**
 * A minute that began no earlier than its day counts no admission the day does not: every request takes a
 * point of both. The two are read from counts reported apart (a lease reads as used until its instance
 * reports it leased, within the propagation bound), so the minute can read above its day for a moment;
 * what it reads over is shown as reserved. A day an operator started over after the minute began
 * (resetWindows; more than a second after) may hold less than the minute, truly.
 */
function minuteWithinDay(minute: WindowUsage, day: WindowUsage): WindowUsage {
  const running = minute.resetAt > 0 && day.resetAt > 0;
  // Within a second: a request's two takes, and the ends the engines answer (a TTL read at the answer),
  // are milliseconds apart, and a new key's minute and day begin with the same request.
  const dayBeganFirst = day.resetAt - ms('day') <= minute.resetAt - ms('minute') + 1_000;
  if (!running || !dayBeganFirst || minute.used <= day.used) return minute;
  const used = day.used;
  return {
    ...minute,
    used,
    reserved: minute.reserved + minute.used - used,
    remaining: Math.max(0, minute.limit - used),
  };
}
