// A shared counter store insured by this process's memory (as rate-limiter-flexible's insurance store): while
// the shared store is unreachable or stalled, the windows fall back to memory (memory-counters.ts), so the
// service stays up and every key is still limited, per instance: each instance admits its share of what
// the window had left when it last asked the shared store, that divided by the live instances (as the
// shared store counts them every 5 seconds while it answers), rounded up. So an outage over-admits a
// window by at most what other instances took of it since this one's last look, shared out, plus one point
// per instance: never N times the quota (docs/rate-limits.md). Marks (bans) have no such fallback: they fail, and
// the limiter honours the bans it has seen (ban-cache.ts).
//
// The first call that fails (or stays unanswered past the store's own deadline) switches every call to
// memory at once (a circuit breaker), and a probe every 500 ms notices a stall between requests. The
// store is shared again only once it says whether it kept its data: if it did, points leased before the
// outage stay good (the epoch holds); if not, a new epoch drops them (leases.ts). Any CounterStore can be
// insured; what is particular to an engine (its connection's events, its ping, its marker) comes in
// through a SharedStoreWatch (store/redis/counters.ts for Redis). Written by hand:
// docs/decisions.md#redis-breaker.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { propagationMs } from '../bounds.js';
import { type CounterStore, fallbackEpoch } from './counter-store.js';
import { memoryCounters } from './memory-counters.js';

/** What the insurance needs to know of the shared store beyond its operations. */
export type SharedStoreWatch = {
  /** The store's name in the log lines (`Redis`). */
  name: string;
  /**
   * Calls `listener` with a reason when the store's connection fails or closes, or when the store is being
   * moved on purpose (`planned`: a Sentinel failover), which is logged as a warning, not an error.
   */
  onLost(listener: (reason: string, planned?: boolean) => void): void;
  /** Calls `listener` when the store's connection is (re)established. */
  onReady(listener: () => void): void;
  /** Whether the connection is up, so worth a probe (when not, onReady will say when it is back). */
  connected(): boolean;
  ping(): Promise<unknown>;
  /** Whether the store still holds what this process left in it (its marker): false when it lost its data. */
  kept(): Promise<boolean>;
  /** Leaves this process's marker in the store (again). */
  remember(): Promise<unknown>;
  /** Takes the marker away (a graceful stop). */
  forget(): Promise<unknown>;
  /** How many instances are alive as the store counts them (this one included). */
  instances(): Promise<number>;
};

/** The heartbeat by which a stall of this process is told from a silent store (see sharedOrMemory). */
const beatMs = 100;
/** A heartbeat this much later than due means the event loop stalled; and a stall this recent still counts. */
const stallMs = 200;
const stallRecentMs = 1_000;

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
  /** Why memory answers now; undefined while the shared store does. */
  let down: string | undefined;
  /** The shared store's epoch (CounterStore.epoch): a new one each time it comes back without its data. */
  let epoch = 0;
  /** Set by stop: the connection's close from here on is the service's own doing, not an outage to log. */
  let stopped = false;
  const lost = (reason: string, planned = false) => {
    if (down) return;
    // Down even after the stop (nothing is logged then: closing the connection is not an outage), so that
    // every call answers from memory alike; a call that fell back while the epoch still said "shared"
    // would have its points dropped at once, and the lease loop would ask again and again (leases.ts).
    down = reason;
    if (stopped) return;
    logger[planned ? 'warn' : 'error'](
      { reason },
      `${watch.name} unreachable: rate limits fall back to per-instance memory until it returns`,
    );
  };
  let returning: Promise<void> | undefined;
  /** The store answers again: shared once its marker says which epoch it is in. */
  const back = () => {
    if (!down || returning) return;
    returning = watch
      .kept()
      .then(
        async (kept) => {
          if (!kept) {
            epoch++;
            await watch.remember().catch(() => {});
            logger.warn(
              `${watch.name} came back empty (restarted without persistence, flushed or evicting): every key's rate-limit windows and bans started over`,
            );
          }
          down = undefined;
          logger.warn(`${watch.name} reachable again: rate limits are shared across instances again`);
          if (kept) void undoLost(); // a store that lost its data lost those takes too
        },
        () => {}, // not yet: the probe asks again
      )
      .finally(() => {
        returning = undefined;
      });
  };
  /** The live instances, as last counted: what each instance's share of a window is divided by. */
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
  const counting = setInterval(() => void (down ? undefined : count()), instancesCountMs);
  counting.unref();
  /**
   * What the shared store last said of each window a lease took (its points taken, and its end): the base
   * of this instance's share while memory stands in. Forgotten as each window ends (sweep).
   */
  const seen = new Map<string, { used: number; resetAt: number }>();
  const share = (key: string, limit: number) => {
    const last = seen.get(key);
    const used = last && last.resetAt > now() ? last.used : 0;
    return Math.ceil(Math.max(0, limit - used) / instances);
  };
  // A call can time out because this process stalled, not the store: a blocked event loop runs the
  // command's timeout timer before it reads the answer already waiting on the socket (timers come first).
  // Falling back then would run a healthy store's windows on memory (CI saw a key of 20 admitted 40 times
  // by three instances busy starting up). A heartbeat tells the two apart: a call that timed out while
  // the loop stalled is taken again on the shared store, once, and the first take (carried out or not) is
  // undone; only a second failure is an outage.
  let beat = performance.now();
  let stalledAt = Number.NEGATIVE_INFINITY;
  const heartbeat = setInterval(() => {
    const at = performance.now();
    if (at - beat > beatMs + stallMs) stalledAt = at;
    beat = at;
  }, beatMs);
  heartbeat.unref();
  const ownStall = () => {
    const at = performance.now();
    return at - beat > beatMs + stallMs || at - stalledAt < stallRecentMs;
  };
  /** Resolves once the connection is up again (20 ms later at least), or at `until`. */
  const reconnected = async (until: number) => {
    do await new Promise((r) => setTimeout(r, 20));
    while (!watch.connected() && performance.now() < until);
  };

  // A connection lost during this process's own stall (its socket timeout ran out while the loop was
  // blocked) is reconnected by the client; the calls meanwhile wait for it (sharedOrMemory).
  watch.onLost((reason, planned) => (planned || !ownStall() ? lost(reason, planned) : undefined));
  watch.onReady(back);
  let probing = false;
  const probe = setInterval(() => {
    if (!watch.connected() || probing) return;
    probing = true;
    watch
      .ping()
      .then(back, (error: Error) => (ownStall() ? undefined : lost(error.message))) // see ownStall
      .finally(() => {
        probing = false;
      });
  }, 500);
  probe.unref();

  const memory = memoryCounters(now);
  /** Takes whose answer never came, to undo once the store answers again (CounterStore.undo). */
  let undoes: { key: string; id: string; epoch: number }[] = [];
  const undoLost = async () => {
    const due = undoes.filter((u) => u.epoch === epoch);
    undoes = [];
    const failed = await Promise.all(
      due.map((u) =>
        (shared.undo as NonNullable<CounterStore['undo']>)(u.key, u.id).then(
          () => [],
          () => [u],
        ),
      ),
    );
    undoes.push(...failed.flat()); // the next return tries them again
  };
  /**
   * A window operation on the shared store, or on memory while it is out. A call that fails switches every
   * call to memory at once (no other request waits out the same silence); the probe switches back.
   */
  const sharedOrMemory = async <T>(call: () => Promise<T>, fallback: () => Promise<T>): Promise<T> => {
    if (down) return fallback();
    try {
      return await call();
    } catch (error) {
      // After a stall of this process: again on the shared store, once it is connected (the stall may
      // have cost the connection its socket timeout), for as long as the stall counts as recent. A named
      // take's failed try is undone (undoLost), so its points come back whether it was carried out or not.
      let failure = error as Error;
      const until = performance.now() + stallRecentMs;
      while (ownStall() && !down && performance.now() < until) {
        await reconnected(until);
        try {
          const again = await call();
          void undoLost();
          return again;
        } catch (next) {
          failure = next as Error;
        }
      }
      lost(failure.message);
      return fallback();
    }
  };
  /** A mark operation: no fallback (a ban must not read as absent from an empty memory). */
  const sharedOnly = async <T>(call: () => Promise<T>): Promise<T> => {
    if (down) throw new Error(`${watch.name} unreachable: ${down}`);
    try {
      return await call();
    } catch (error) {
      lost((error as Error).message);
      throw error;
    }
  };

  const counters: CounterStore = {
    take: (key, want, limit, windowMs, lease) =>
      sharedOrMemory(
        async () => {
          const at = epoch; // the epoch the points come from, even if the store comes back empty meanwhile
          // A lease's take is named: when its answer never comes, it is undone once the store answers again
          // (a stalled Redis carries out what it had received when it resumes: those points were never used).
          const named = lease && shared.undo ? { ...lease, id: lease.id ?? randomUUID() } : lease;
          try {
            const grant = await shared.take(key, want, limit, windowMs, named);
            if (lease) seen.set(key, { used: grant.used, resetAt: grant.resetAt });
            return { ...grant, epoch: at };
          } catch (error) {
            if (named?.id) undoes.push({ key, id: named.id, epoch: at });
            throw error;
          }
        },
        // A lease's window: this instance's share of what was left. Other counts (a key's violations)
        // keep their limit.
        async () => {
          const own = lease ? share(key, limit) : limit;
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
    delete: (key) =>
      sharedOrMemory(
        async () => {
          await Promise.all([shared.delete(key), memory.delete(key)]);
        },
        () => memory.delete(key),
      ),
    // The fallback's ended windows, and the shared store's where it does not expire them itself.
    sweep: async () => {
      for (const [key, last] of seen) if (last.resetAt <= now()) seen.delete(key);
      return (await memory.sweep()) + (down ? 0 : await shared.sweep().catch(() => 0));
    },
    get epoch() {
      return down ? fallbackEpoch : epoch;
    },
  };
  const stop = async () => {
    stopped = true;
    clearInterval(probe);
    clearInterval(counting);
    clearInterval(heartbeat);
    if (!down) await watch.forget().catch(() => {});
  };
  return { counters, degraded: () => down, stop };
}
