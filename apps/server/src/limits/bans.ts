// Temporary bans of keys (policy.ts decides when a 429 counts): the ban of record lives in the counter
// store (shared across instances, kept over a restart), as a mark; the bans this process has seen are
// remembered for banCacheMs (ban-cache.ts), so that a banned key's requests mostly cost no store call.
import type { Limits } from '../config.js';
import { windowSeconds } from '../plans.js';
import { BanCache } from './ban-cache.js';
import type { CounterStore } from './counter-store.js';
import { recheckMs } from './lease-terms.js';

/** How long the ban list is trusted after it was asked: two looks at it missed, and it is not. */
const listTrustedMs = 2 * recheckMs;

/** The shortest wait an answer asks (Retry-After is in whole seconds, at least 1). */
export const shortestWaitMs = 1_000;

/** How every key's ban of record is named (and listed: CounterStore.listed). */
const banPrefix = 'ban:';

/** The names of a key's windows and marks in the counter store. */
export type KeyNames = ReturnType<typeof namesOf>;
const namesOf = (id: string) => ({
  minute: `minute:${id}`,
  day: `day:${id}`,
  violations: `violations:${id}`,
  ban: `${banPrefix}${id}`,
  newTerms: `new-terms:${id}`,
});
/**
 * The keys' names, made once per key: every request looks its windows up by name, and a string made anew
 * is hashed anew at each lookup. Forgotten whole past namesKept keys (ids of keys that opened: bounded by
 * the store's keys, not by what clients send).
 */
const names = new Map<string, KeyNames>();
const namesKept = 10_000;
export const keyNames = (id: string): KeyNames => {
  let found = names.get(id);
  if (!found) {
    if (names.size >= namesKept) names.clear();
    found = namesOf(id);
    names.set(id, found);
  }
  return found;
};

/**
 * Where each key's refusal began in this process, for the ban's grace: a pool of obedient clients meets
 * one refusal each when the window runs out (the requests in flight then, and those told a wait of 1 s
 * while points were held elsewhere), all within a moment of the first; a client that keeps sending
 * meets refusals long after it. So a refusal counts toward a ban only `graceMs` or more after the first
 * this process answered for the key, while the wait that first one told still runs. In memory: each
 * process judges the refusals it answers (a pool spread over instances gets at least the grace on each),
 * and it costs no store call. No limiter library tells a pool from a client that ignores Retry-After.
 * Written by hand: docs/decisions.md#bans.
 */
export class Refusals {
  readonly #since = new Map<string, { since: number; until: number }>();
  constructor(
    private readonly graceMs: number,
    private readonly now: () => number,
  ) {}

  /** Records a refusal of `id` telling a wait of `waitMs`; whether it came past the grace of its refusal. */
  pastGrace(id: string, waitMs: number): boolean {
    const at = this.now();
    const seen = this.#since.get(id);
    if (!seen || seen.until <= at) {
      this.#since.set(id, { since: at, until: at + waitMs });
      return this.graceMs === 0;
    }
    seen.until = Math.max(seen.until, at + waitMs);
    return at - seen.since >= this.graceMs;
  }

  /** A key's terms changed or it was unbanned: a refusal after it begins anew. */
  forget(id: string): void {
    this.#since.delete(id);
  }

  /** Forgets refusals whose waits have ended (memory stays bounded by the keys refused now). */
  sweep(): void {
    const at = this.now();
    for (const [id, seen] of this.#since) if (seen.until <= at) this.#since.delete(id);
  }
}

/**
 * How often violations counted in memory are added to the key's record in the store (for every instance's
 * threshold). A refusal that takes a key past the threshold as far as this process knows adds its own at
 * once, so that a request starts the ban (and logs it); the others wait for the batch.
 */
export const violationFlushMs = 250;

/** A key's violations this process counted and has not added to the store, and the record as last read. */
type Batch = {
  pending: number;
  /**
   * Violations of an add on its way to the store: no longer pending, not yet in `known`. Counted with them,
   * so that a refusal meanwhile knows them (one arriving while the batch waited on a loaded store read
   * neither, and a key past its threshold was not banned).
   */
  sending: number;
  /** The store's count at this process's last add, and when that record ends. */
  known: number;
  knownUntil: number;
  /** The adds of this key, one at a time. */
  chain: Promise<unknown>;
};

export function keyBans(store: CounterStore, ban: Limits['ban'], now: () => number) {
  const banCache = new BanCache(now);
  const refusals = new Refusals(ban.graceSeconds * 1000, now);

  /**
   * The ban of record, read from the store (remembered). While a store with a stand-in cannot say (Redis
   * out: the take answers from memory), the bans already seen; a store without one (SQLite, PostgreSQL)
   * that cannot say fails the request now, since its take would fail too after as long a wait again (a
   * frozen PostgreSQL held requests 6 s where the statement timeout promised 4).
   */
  async function confirm(id: string): Promise<number> {
    let until: number;
    try {
      until = await store.endsAt(keyNames(id).ban);
    } catch (error) {
      if (store.epoch === undefined) throw error;
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

  // The ban list (CounterStore.listed): every key banned now, read in one call every recheckMs (the
  // limiter's timer: policy.ts). While it is up to date, a key not on it has no ban of record, so a take
  // from the store needs no look at the ban first (a quiet key's requests each cost the store one call
  // less); a key on it that this process has not seen banned is confirmed at its next request (`banned`),
  // though a lease still has points of it. The ban of record stays the authority: the list only says which
  // keys to ask about. Out of date (the store did not answer two looks), the ban of record is read before
  // every take.
  // Written by hand: docs/decisions.md#bans.
  let listedAt = Number.NEGATIVE_INFINITY;
  let listing = false;
  /** Keys on the list that this process had not seen banned when it read it. */
  let unseen = new Set<string>();
  async function readList(): Promise<void> {
    if (listing) return;
    listing = true;
    try {
      const askedAt = now();
      const listed = await store.listed(banPrefix);
      unseen = new Set(
        [...listed.keys()]
          .map((name) => name.slice(banPrefix.length))
          .filter((id) => banCache.known(id) === 0),
      );
      listedAt = askedAt;
    } catch {
      // Out of date until a look succeeds: bans are read per key meanwhile (listUpToDate).
    } finally {
      listing = false;
    }
  }
  const listUpToDate = () => now() - listedAt <= listTrustedMs;

  const batches = new Map<string, Batch>();
  /** The record's count as this process last read it: none once the record's minute has ended. */
  const knownNow = (batch: Batch): number => {
    if (batch.knownUntil <= now()) batch.known = 0;
    return batch.known;
  };
  const batchOf = (id: string): Batch => {
    let batch = batches.get(id);
    if (!batch) {
      batch = { pending: 0, sending: 0, known: 0, knownUntil: 0, chain: Promise.resolve() };
      batches.set(id, batch);
    }
    return batch;
  };

  /**
   * Adds the key's pending violations to its record in the store, after any add of it on its way, and
   * (`mayStart`: a request's, not the timer's) starts the ban when the record passed the threshold. Pending
   * violations of a key whose terms just changed, or that is banned, count toward nothing. A failed add is
   * kept for the next one, and fails the request that made it (the store failed, as a take would).
   */
  function add(id: string, batch: Batch, mayStart: boolean): Promise<{ banMs: number; started: boolean }> {
    const added = batch.chain.then(async () => {
      const none = { banMs: 0, started: false };
      const running = banCache.known(id);
      if (running > 0) {
        batch.pending = 0;
        return { banMs: running, started: false };
      }
      const key = keyNames(id);
      // A refusal about to start the ban asks first whether another instance started one (its own view of
      // the record may lag by a batch): then that ban is the answer, and nothing is counted.
      const elsewhere = mayStart ? await confirm(id) : 0;
      if (elsewhere > 0) {
        batch.pending = 0;
        return { banMs: elsewhere, started: false };
      }
      const n = batch.pending;
      batch.pending = 0;
      if (n > 0) {
        let counted: Awaited<ReturnType<CounterStore['take']>>;
        batch.sending += n;
        try {
          if ((await store.endsAt(key.newTerms)) > now()) return none;
          counted = await store.take(key.violations, n, ban.threshold + 1, windowSeconds.minute * 1000);
        } catch (error) {
          batch.pending += n;
          flushLater();
          throw error;
        } finally {
          batch.sending -= n;
        }
        batch.known = counted.used;
        batch.knownUntil = counted.resetAt;
      }
      if (!mayStart || knownNow(batch) <= ban.threshold) return none;
      const banMs = ban.seconds * 1000;
      // Recorded in the store for every instance; while it cannot be, this instance still bans the key.
      const ours = await store.take(key.ban, 1, 1, banMs).then(
        (grant) => grant.granted > 0,
        () => true,
      );
      batch.known = 0; // the record starts clean once a ban starts
      if (!ours) return { banMs: await confirm(id), started: false }; // another started it
      banCache.set(id, banMs);
      // On the list for every instance; a ban left off it (the store failed just now) is still seen at
      // each instance's next refusal of the key, whose windows it shares.
      await store.enlist(banPrefix, key.ban, now() + banMs).catch(() => {});
      await store.delete(key.violations).catch(() => {}); // after the ban, the key starts with a clean record
      return { banMs, started: true };
    });
    batch.chain = added.catch(() => {});
    return added;
  }

  /** The batches' timer: one for the process, armed while violations wait to be added. */
  let flushTimer: NodeJS.Timeout | undefined;
  const flushLater = () => {
    flushTimer ??= setTimeout(() => {
      flushTimer = undefined;
      for (const [id, batch] of batches) if (batch.pending > 0) void add(id, batch, false).catch(() => {});
    }, violationFlushMs);
    flushTimer.unref();
  };

  return {
    confirm,
    readList,
    /**
     * The key's ban before a take from the store (ms left, 0 for none): from memory while the ban list is
     * up to date and the key is not on it unseen (no ban of record), else the ban of record, confirmed.
     */
    beforeTake(id: string): Promise<number> {
      if (listUpToDate() && !unseen.delete(id)) return Promise.resolve(banCache.known(id));
      return confirm(id);
    },
    /** Whether `banned` answers "no ban" from memory: no ban seen, and the key not on the list unseen. */
    clearInMemory: (id: string) => !unseen.has(id) && banCache.known(id) === 0,
    /**
     * The key's ban, every request's first look: a key the ban list names that this process has not seen
     * banned is confirmed with the store at its next request, though a lease of this process still has
     * points of it (a ban another instance started reaches this one within the list's second). Else from
     * memory: a ban seen within banCacheMs holds; an older one is confirmed with the store (so `keys unban`
     * reaches every process within that time). From memory, the ban may have been lifted elsewhere since it
     * was confirmed (an unban, a new plan): the answer asks no wait past this process's next look at the
     * store (`atMostMs`), so that a client obeying it never waits out a lifted ban.
     */
    async banned(id: string): Promise<{ banMs: number; atMostMs?: number }> {
      if (unseen.delete(id)) return { banMs: await confirm(id) };
      if (banCache.known(id) === 0) return { banMs: 0 };
      const banMs = banCache.fresh(id);
      if (banMs === 0) return { banMs: await confirm(id) };
      return { banMs, atMostMs: Math.max(shortestWaitMs, banCache.recheckIn(id)) };
    },
    /**
     * Counts a refusal telling a wait of `waitMs` against the key, unless it is within the grace of the
     * key's refusal (Refusals); past the threshold within a minute, bans it. Counted in memory and added to
     * the store every violationFlushMs (no store call per refusal), except by the refusal that takes the
     * key past the threshold as this process knows it (the store's count at its last add and its own since),
     * which adds them at once and starts the ban. The ban of record is a window of one point (a take of it
     * starts the ban): exactly one request starts a ban, whichever instance answers it and however many
     * cross the threshold at once, and the violations counted meanwhile (the record starts clean once a ban
     * starts) start none while it runs. Across instances a ban may start up to violationFlushMs late.
     */
    async violation(id: string, waitMs: number): Promise<{ banMs: number; started: boolean }> {
      if (!refusals.pastGrace(id, waitMs)) return { banMs: 0, started: false };
      const batch = batchOf(id);
      batch.pending++;
      if (knownNow(batch) + batch.sending + batch.pending <= ban.threshold) {
        flushLater();
        return { banMs: 0, started: false };
      }
      return add(id, batch, true);
    },
    sweep() {
      refusals.sweep();
      for (const [id, batch] of batches)
        if (batch.pending === 0 && batch.sending === 0 && batch.knownUntil <= now()) batches.delete(id);
    },
    /** Adds what waits to be added (a graceful stop); failures are ignored. */
    async flush(): Promise<void> {
      clearTimeout(flushTimer);
      flushTimer = undefined;
      await Promise.all([...batches].map(([id, batch]) => add(id, batch, false).catch(() => {})));
    },
    /** The keys banned now, on any instance: those on the ban list whose ban of record runs. */
    async bannedNow(): Promise<string[]> {
      const ids = [...(await store.listed(banPrefix)).keys()].map((name) => name.slice(banPrefix.length));
      const running = await Promise.all(ids.map(async (id) => ((await confirm(id)) > 0 ? id : undefined)));
      return running.filter((id) => id !== undefined);
    },
    async unban(id: string): Promise<void> {
      banCache.forget(id);
      refusals.forget(id);
      batches.delete(id);
      unseen.delete(id);
      // Off the list first: a ban of record deleted but still listed would be asked about once a second.
      await store.delist(banPrefix, keyNames(id).ban);
      await store.delete(keyNames(id).ban);
      await store.delete(keyNames(id).violations);
    },
  };
}
