// The insurance's circuit breaker (insured.ts): whether the shared store answers, and in which epoch. A call
// that fails (or stays unanswered past the store's own deadline) is followed by a second look: the
// connection up again and the store answering, within two more deadlines. Only when that fails too does it
// open, so that every call goes to memory at once: an answer slowed by a loaded machine is not an outage
// (one failed call opening it put instances on per-instance limits, with an error line, while Redis was
// up: 18 lines in 9 of 34 runs under load). A probe every second notices a stall between requests. It closes only once the
// store says whether it kept its data: if it did, the epoch holds (points leased before the outage stay
// good); if not, a new epoch drops them (leases.ts). A failure that this process's own stall explains
// (stalls.ts) does not open it, and is logged as the event loop's lag; a second look's time counts only
// while the loop ran (a look that was a casualty of the lag took a busy instance's healthy Redis for out:
// 5,000 takes sent at once did so). Written by hand: docs/decisions.md#redis-breaker.
import type { Logger } from 'pino';
import type { Stalls } from './stalls.js';

/**
 * How often the probe reads the marker. Every instance's probe is Redis's largest fixed cost after the
 * leases (docs/decisions.md#what-the-limits-cost-the-store): at 500 ms, 8 of the 42 commands a second that
 * one busy key on four instances cost. A second bounds a flush's notice and an idle stall's alike.
 */
const probeMs = 1_000;
/** A second look lasts this many deadlines at most, however late the event loop runs. */
const lookCap = 10;
/** The event loop's lag is logged at most once in this long. */
const lagLineMs = 60_000;

/** What the insurance (insured.ts) needs to know of the shared store beyond its operations. */
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
  /** How long a call may go unanswered (the store's command timeout): a second look takes as long at most. */
  deadlineMs: number;
  /** Whether the store still holds what this process left in it (its marker): false when it lost its data. */
  kept(): Promise<boolean>;
  /** Leaves this process's marker in the store (again). */
  remember(): Promise<unknown>;
  /** Takes the marker away (a graceful stop). */
  forget(): Promise<unknown>;
  /** How many instances are alive as the store counts them (this one included). */
  instances(): Promise<number>;
};

export type Breaker = {
  /** Why memory answers now; undefined while the shared store does. */
  readonly down: string | undefined;
  /** The shared store's epoch (CounterStore.epoch): a new one each time it comes back without its data. */
  readonly epoch: number;
  /** CounterStore.check and CounterStore.lostAfter. */
  readonly check: number;
  readonly lostAfter: number;
  /** The store failed: open (logged once; a planned move as a warning). */
  lost(reason: string, planned?: boolean): void;
  /**
   * A call failed: a second look (shared by every caller meanwhile), and open unless the store answers it.
   * Whether it answered, so that the call can be made again.
   */
  doubt(reason: string): Promise<boolean>;
  /** Whether this process's own stall explains a failure (then logged as lag, at most once a minute). */
  lagExplains(reason: string): boolean;
  /** Nothing is logged from here on: closing the connection is the service's own doing. */
  stop(): void;
};

/**
 * `returned` runs when the store answers again having kept its data (what was lost meanwhile is redone),
 * `lostData` when it is found without it (in the new epoch).
 */
export function breaker(
  watch: SharedStoreWatch,
  logger: Logger,
  stalls: Stalls,
  returned: () => void,
  lostData: () => void,
): Breaker {
  let down: string | undefined;
  let epoch = 0;
  let stopped = false;
  // The store's data checks (its marker read), numbered as they begin: what this process did after the
  // latest one that found the data kept began may have been lost with it.
  let check = 0;
  let keptCheck = 0;
  let lostAfter = 0;
  const kept = async () => {
    const n = ++check;
    const answer = await watch.kept();
    if (answer) keptCheck = Math.max(keptCheck, n);
    return answer;
  };
  const lost = (reason: string, planned = false) => {
    if (down) return;
    // Down even after the stop (nothing is logged then), so that every call answers from memory alike; a
    // call that fell back while the epoch still said "shared" would have its points dropped at once, and
    // the lease loop would ask again and again (leases.ts).
    down = reason;
    if (stopped) return;
    logger[planned ? 'warn' : 'error'](
      { reason },
      `${watch.name} unreachable: rate limits fall back to per-instance memory until it returns`,
    );
  };
  let lagLoggedAt = Number.NEGATIVE_INFINITY;
  const lagExplains = (reason: string) => {
    if (!stalls.recent()) return false;
    const at = performance.now();
    if (!stopped && at - lagLoggedAt >= lagLineMs) {
      lagLoggedAt = at;
      logger.warn(
        { reason, lagMs: Math.round(stalls.worstRecentMs()) },
        `this process's event loop lagged: a ${watch.name} call went unanswered while it was busy, not ${watch.name} (rate limits stay shared)`,
      );
    }
    return true;
  };
  let looking: Promise<boolean> | undefined;
  /** Whether the store's marker is read before `until()` (false: an error, or no answer by then). */
  const answersBefore = async (until: () => number) => {
    let timer: NodeJS.Timeout | undefined;
    const answered = await Promise.race([
      kept().then(
        () => true,
        () => false,
      ),
      new Promise<boolean>((resolve) => {
        const wait = () => {
          const left = until() - performance.now();
          if (left <= 0) resolve(false);
          else timer = setTimeout(wait, left); // the lag meanwhile moved `until` on
        };
        wait();
      }),
    ]);
    clearTimeout(timer);
    return answered;
  };
  /**
   * Whether the store answers within two deadlines of this process's running time (the event loop's lag
   * meanwhile added on, up to lookCap deadlines in all): its connection up (again: a silent one is
   * destroyed and made anew), and its marker read, asked again until then (a connection still being torn
   * down fails at once). Two, not one: under a loaded machine the new connection and its first answer
   * took more than one (a Redis frozen 700 ms against a 500 ms timeout was taken for out).
   */
  const secondLook = () => {
    looking ??= (async () => {
      const start = performance.now();
      const lagAtStart = stalls.lagged();
      const until = () =>
        start + Math.min(lookCap * watch.deadlineMs, 2 * watch.deadlineMs + stalls.lagged() - lagAtStart);
      while (performance.now() < until()) {
        if (watch.connected() && (await answersBefore(until))) return true;
        await new Promise((r) => setTimeout(r, 20));
      }
      return false;
    })().finally(() => {
      looking = undefined;
    });
    return looking;
  };
  const doubt = async (reason: string) => {
    if (down) return false;
    if (await secondLook()) {
      lagExplains(reason); // logged as lag when the process stalled meanwhile
      return true;
    }
    lost(reason);
    return false;
  };
  let returning: Promise<void> | undefined;
  /**
   * The store lost its data (its marker is gone): a new epoch, so that the points leased from the old one
   * are dropped (leases.ts), and one line. It was lost after the last check that found it kept began.
   */
  const emptied = async () => {
    lostAfter = keptCheck;
    epoch++;
    lostData();
    await watch.remember().catch(() => {});
    logger.warn(
      `${watch.name} came back empty (restarted without persistence, flushed or evicting): every key's rate-limit windows and bans started over`,
    );
  };
  /** The store answers again: shared once its marker says which epoch it is in. */
  const back = () => {
    if (!down || returning) return;
    returning = kept()
      .then(
        async (found) => {
          if (!found) await emptied();
          down = undefined;
          logger.warn(`${watch.name} reachable again: rate limits are shared across instances again`);
          if (found) returned(); // a store that lost its data lost those takes too
        },
        () => {}, // not yet: the probe asks again
      )
      .finally(() => {
        returning = undefined;
      });
  };
  // A connection lost during this process's own stall (its socket timeout ran out while the loop was
  // blocked) is reconnected by the client; the calls meanwhile wait for it (insured.ts).
  watch.onLost((reason, planned) => {
    if (planned) lost(reason, planned);
    else if (!lagExplains(reason)) void doubt(reason);
  });
  watch.onReady(back);
  // The probe asks whether the marker is still there, which is a ping too: a store flushed while it
  // answered (FLUSHALL, an eviction) is noticed within probeMs, not never (points leased before it kept
  // admitting, counted nowhere: 106 over a new window's limit).
  let probing = false;
  const probe = setInterval(() => {
    if (!watch.connected() || probing) return;
    probing = true;
    const answered = (found: boolean) => {
      if (down) back();
      else if (!found && !stopped) return emptied(); // flushed, or restarted between two probes
    };
    kept()
      .then(answered, (error: Error) => (lagExplains(error.message) ? undefined : doubt(error.message)))
      .finally(() => {
        probing = false;
      });
  }, probeMs);
  probe.unref();
  return {
    get down() {
      return down;
    },
    get epoch() {
      return epoch;
    },
    get check() {
      return check;
    },
    get lostAfter() {
      return lostAfter;
    },
    lost,
    doubt,
    lagExplains,
    stop() {
      stopped = true;
      clearInterval(probe);
    },
  };
}
