// A shared counter store insured by this process's memory (as rate-limiter-flexible's insurance store): while
// the shared store is unreachable or stalled, the windows fall back to memory (memory-counters.ts), so the
// service stays up and every key is still limited, per instance: each instance admits its share of what
// the window had left when it last asked the shared store, that divided by the live instances (as the
// shared store counts them every 5 seconds while it answers), rounded up. So an outage over-admits a
// window by at most what other instances took of it since this one's last look, shared out, plus one point
// per instance: never N times the quota (docs/rate-limits.md). Marks (bans) have no such fallback: they fail, and
// the limiter honours the bans it has seen (ban-cache.ts).
//
// When the store is out, and when it answers again, is the breaker's to say (breaker.ts); a failure that
// this process's own stall explains is taken again instead (stalls.ts). Any CounterStore can be insured;
// what is particular to an engine (its connection's events, its ping, its marker) comes in through a
// SharedStoreWatch (store/redis/counters.ts for Redis). Written by hand: docs/decisions.md#redis-breaker.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { propagationMs } from '../bounds.js';
import { type Breaker, breaker, type SharedStoreWatch } from './breaker.js';
import { type CounterStore, fallbackEpoch } from './counter-store.js';
import { memoryCounters } from './memory-counters.js';
import { eventLoopStalls, stallRecentMs } from './stalls.js';

/** How often the live instances are counted while the shared store answers: within the propagation bound. */
export const instancesCountMs = propagationMs;
/** An instance that has not said it is alive for this long (crashed) is no longer counted. */
export const instanceLiveMs = 3 * instancesCountMs;

/** The insured counters, why they run on memory now (undefined when shared), and the stop of the probe. */
export function insured(
  shared: CounterStore,
  watch: SharedStoreWatch,
  logger: Logger,
  now = () => Date.now(),
): {
  counters: CounterStore;
  degraded(): string | undefined;
  stop(): Promise<void>;
} {
  const stalls = eventLoopStalls();
  const undoes = undoQueue(
    shared,
    () => state.epoch,
    () => state.down !== undefined,
  );
  const lostDataListeners: (() => void)[] = [];
  const state = breaker(
    watch,
    logger,
    stalls,
    () => void undoes.flush(),
    () => {
      for (const listener of lostDataListeners) listener();
    },
  );
  const live = liveInstances(watch, () => state.down !== undefined);
  const counters = fallingBack(shared, memoryCounters(now), {
    state,
    calls: storeCalls(watch, state, undoes),
    undoes,
    instances: () => live.count,
    lostDataListeners,
    now,
  });
  const stop = async () => {
    state.stop();
    live.stop();
    stalls.stop();
    if (!state.down) await watch.forget().catch(() => {});
  };
  return { counters, degraded: () => state.down, stop };
}

type UndoQueue = ReturnType<typeof undoQueue>;

/**
 * Takes whose answer never came, to undo once the store answers again in their epoch (CounterStore.undo).
 * An undo that fails while the store is up is tried again 500 ms later (once its take's record expires,
 * an undo finds nothing to give back and succeeds); while the store is out, its return tries them.
 */
function undoQueue(shared: CounterStore, epoch: () => number, down: () => boolean) {
  let undoes: { key: string; id: string; epoch: number }[] = [];
  const queue = {
    add: (key: string, id: string, at: number) => void undoes.push({ key, id, epoch: at }),
    async flush(): Promise<void> {
      const due = undoes.filter((u) => u.epoch === epoch());
      undoes = [];
      const undo = shared.undo as NonNullable<CounterStore['undo']>;
      const tried = await Promise.all(
        due.map((u) =>
          undo(u.key, u.id).then(
            () => [],
            () => [u],
          ),
        ),
      );
      const failed = tried.flat();
      undoes.push(...failed);
      if (failed.length > 0 && !down()) setTimeout(() => void queue.flush(), 500).unref();
    },
  };
  return queue;
}

/** The live instances, as last counted: what each instance's share of a window is divided by. */
function liveInstances(watch: SharedStoreWatch, down: () => boolean) {
  let instances = 1;
  const count = () =>
    watch.instances().then(
      (n) => {
        instances = Math.max(1, n);
      },
      () => {}, // the last count holds
    );
  void watch
    .remember()
    .then(count)
    .catch(() => {});
  const counting = setInterval(() => void (down() ? undefined : count()), instancesCountMs);
  counting.unref();
  return {
    get count() {
      return instances;
    },
    stop: () => clearInterval(counting),
  };
}

type StoreCalls = ReturnType<typeof storeCalls>;

/** How a call reaches the shared store: with memory to fall back on (windows), or none (marks). */
function storeCalls(watch: SharedStoreWatch, state: Breaker, undoes: UndoQueue) {
  /** Resolves once the connection is up again (20 ms later at least), or at `until`. */
  const reconnected = async (until: number) => {
    do await new Promise((r) => setTimeout(r, 20));
    while (!watch.connected() && performance.now() < until);
  };
  return {
    /**
     * A window operation on the shared store, or on memory while it is out. After a stall of this
     * process, a call that failed is made again once the connection is up (the stall may have cost it its
     * socket timeout), while the stall counts as recent. Else the breaker takes a second look, and the call
     * is made again once if the store answered it; when it did not, the breaker is open (no other request
     * waits out the same silence). A named take's failed try is undone, whether it was carried out or not.
     */
    async sharedOrMemory<T>(call: () => Promise<T>, fallback: () => Promise<T>): Promise<T> {
      if (state.down) return fallback();
      try {
        return await call();
      } catch (error) {
        let failure = error as Error;
        /** The call made again: its answer (a failed try's undo sent then), or why it failed too. */
        const again = async (): Promise<{ answer: T } | { failed: Error }> => {
          try {
            const answer = await call();
            void undoes.flush();
            return { answer };
          } catch (next) {
            return { failed: next as Error };
          }
        };
        const until = performance.now() + stallRecentMs;
        while (state.lagExplains(failure.message) && !state.down && performance.now() < until) {
          await reconnected(until);
          const tried = await again();
          if ('answer' in tried) return tried.answer;
          failure = tried.failed;
        }
        if (!state.down && (await state.doubt(failure.message))) {
          const tried = await again();
          if ('answer' in tried) return tried.answer;
          failure = tried.failed;
        }
        state.lost(failure.message);
        return fallback();
      }
    },
    /** A mark operation: no fallback (a ban must not read as absent from an empty memory). */
    async sharedOnly<T>(call: () => Promise<T>): Promise<T> {
      if (state.down) throw new Error(`${watch.name} unreachable: ${state.down}`);
      try {
        return await call();
      } catch (error) {
        void state.doubt((error as Error).message);
        throw error;
      }
    },
  };
}

/**
 * What the shared store last said of each window a lease took (its points taken, and its end): the base of
 * this instance's share while memory stands in. Forgotten as each window ends.
 */
function lastSeen(now: () => number, instances: () => number) {
  const seen = new Map<string, { used: number; resetAt: number }>();
  return {
    record: (key: string, { used, resetAt }: { used: number; resetAt: number }) =>
      void seen.set(key, { used, resetAt }),
    /** This instance's share of what the window had left when last seen: that over the live instances. */
    share(key: string, limit: number) {
      const last = seen.get(key);
      const used = last && last.resetAt > now() ? last.used : 0;
      return Math.ceil(Math.max(0, limit - used) / instances());
    },
    forgetEnded() {
      for (const [key, last] of seen) if (last.resetAt <= now()) seen.delete(key);
    },
  };
}

/** The counter store the limiter sees: the shared one's operations, each with its fallback. */
function fallingBack(
  shared: CounterStore,
  memory: CounterStore,
  {
    state,
    calls,
    undoes,
    instances,
    lostDataListeners,
    now,
  }: {
    state: Breaker;
    calls: StoreCalls;
    undoes: UndoQueue;
    instances: () => number;
    lostDataListeners: (() => void)[];
    now: () => number;
  },
): CounterStore {
  const { sharedOrMemory, sharedOnly } = calls;
  const seen = lastSeen(now, instances);
  return {
    take: (key, want, limit, windowMs, lease) =>
      sharedOrMemory(
        async () => {
          const at = state.epoch; // the epoch the points come from, even if the store comes back empty meanwhile
          // A lease's take is named: when its answer never comes, it is undone once the store answers again
          // (a stalled Redis carries out what it had received when it resumes: those points were never used).
          const named = lease && shared.undo ? { ...lease, id: lease.id ?? randomUUID() } : lease;
          try {
            const grant = await shared.take(key, want, limit, windowMs, named);
            if (lease) seen.record(key, grant);
            return { ...grant, epoch: at };
          } catch (error) {
            if (named?.id) undoes.add(key, named.id, at);
            throw error;
          }
        },
        // A lease's window: this instance's share of what was left. Other counts (a key's violations)
        // keep their limit.
        async () => {
          const own = lease ? seen.share(key, limit) : limit;
          return { ...(await memory.take(key, want, own, windowMs, lease)), epoch: fallbackEpoch };
        },
      ),
    // Points go back to the store they came from, and a lease's came from the shared store (the stand-in's
    // are never given back: leases.ts): while it is out, a give-back fails, and the lease keeps them.
    giveBack: (key, points, resetAt, id) => sharedOnly(() => shared.giveBack(key, points, resetAt, id)),
    read: (key) =>
      sharedOrMemory(
        () => shared.read(key),
        () => memory.read(key),
      ),
    ...(shared.undo && {
      undo: (key: string, id: string) => sharedOnly(async () => shared.undo?.(key, id)),
    }),
    endsAt: (key) => sharedOnly(() => shared.endsAt(key)),
    mark: (key, ms) => sharedOnly(() => shared.mark(key, ms)),
    // A list (the bans) has no stand-in: while the store is out, a process goes by the bans it knows.
    listed: (prefix) => sharedOnly(() => shared.listed(prefix)),
    enlist: (prefix, name, until) => sharedOnly(() => shared.enlist(prefix, name, until)),
    delist: (prefix, name) => sharedOnly(() => shared.delist(prefix, name)),
    delete: (key) =>
      sharedOrMemory(
        async () => {
          await Promise.all([shared.delete(key), memory.delete(key)]);
        },
        () => memory.delete(key),
      ),
    // The fallback's ended windows, and the shared store's where it does not expire them itself.
    sweep: async () => {
      seen.forgetEnded();
      return (await memory.sweep()) + (state.down ? 0 : await shared.sweep().catch(() => 0));
    },
    get epoch() {
      return state.down ? fallbackEpoch : state.epoch;
    },
    onLostData: (listener) => void lostDataListeners.push(listener),
    get check() {
      return state.check;
    },
    get lostAfter() {
      return state.lostAfter;
    },
  };
}
