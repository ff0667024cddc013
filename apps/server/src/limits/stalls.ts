// This process's own stalls, told apart from a silent shared store. A blocked event loop (a busy start, a
// long garbage collection) runs a command's timeout timer, and the socket timeout that closes its
// connection, before it reads the answer already waiting on the socket: timers come first. Read as an
// outage, a healthy store's windows ran on memory (CI saw a key of 20 admitted 40 times by three instances
// busy starting up). A heartbeat every beatMs says when the loop last stalled. Written by hand:
// docs/decisions.md#redis-breaker.

/** The heartbeat's period. */
const beatMs = 100;
/** A heartbeat this much later than due means the event loop stalled. */
const stallMs = 200;
/** A stall this recent still explains a failure. */
export const stallRecentMs = 1_000;

export type Stalls = {
  /** Whether the event loop stalls now, or did within stallRecentMs. */
  recent(): boolean;
  stop(): void;
};

export function eventLoopStalls(): Stalls {
  let beat = performance.now();
  let stalledAt = Number.NEGATIVE_INFINITY;
  const heartbeat = setInterval(() => {
    const at = performance.now();
    if (at - beat > beatMs + stallMs) stalledAt = at;
    beat = at;
  }, beatMs);
  heartbeat.unref();
  return {
    recent() {
      const at = performance.now();
      return at - beat > beatMs + stallMs || at - stalledAt < stallRecentMs;
    },
    stop: () => clearInterval(heartbeat),
  };
}
