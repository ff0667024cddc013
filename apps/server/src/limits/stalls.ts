// This process's own stalls, told apart from a silent shared store. A blocked event loop (a busy start, a
// long garbage collection) runs a command's timeout timer, and the socket timeout that closes its
// connection, before it reads the answer already waiting on the socket: timers come first. Read as an
// outage, a healthy store's windows ran on memory (CI saw a key of 20 admitted 40 times by three instances
// busy starting up). A heartbeat every beatMs says when the loop last stalled, how late it ran in all (the
// lag a second look adds to its time: breaker.ts), and the worst lateness of late. Written by hand:
// docs/decisions.md#redis-breaker (perf_hooks' monitorEventLoopDelay gives a histogram, not when).

/** The heartbeat's period. */
const beatMs = 100;
/** A heartbeat this much later than due means the event loop stalled. */
const stallMs = 200;
/** A stall this recent still explains a failure. */
export const stallRecentMs = 1_000;

export type Stalls = {
  /** Whether the event loop stalls now, or did within stallRecentMs. */
  recent(): boolean;
  /** How late the heartbeats ran in all (ms, growing): the lag between two readings is their difference. */
  lagged(): number;
  /** The latest heartbeat's lateness, or the longest within stallRecentMs (ms). */
  worstRecentMs(): number;
  stop(): void;
};

export function eventLoopStalls(): Stalls {
  let beat = performance.now();
  let stalledAt = Number.NEGATIVE_INFINITY;
  let lateInAll = 0;
  let worst = { late: 0, at: beat };
  const lateNow = (at: number) => Math.max(0, at - beat - beatMs);
  const heartbeat = setInterval(() => {
    const at = performance.now();
    const late = lateNow(at);
    if (late > stallMs) stalledAt = at;
    lateInAll += late;
    if (late >= worst.late || at - worst.at > stallRecentMs) worst = { late, at };
    beat = at;
  }, beatMs);
  heartbeat.unref();
  return {
    recent() {
      const at = performance.now();
      return lateNow(at) > stallMs || at - stalledAt < stallRecentMs;
    },
    lagged: () => lateInAll + lateNow(performance.now()),
    worstRecentMs() {
      const at = performance.now();
      return Math.max(lateNow(at), at - worst.at <= stallRecentMs ? worst.late : 0);
    },
    stop: () => clearInterval(heartbeat),
  };
}
