// The terms of a lease, apart from any state: how many points a process asks its window for, how long it may
// hold them, and how fast the window is taken. Pure functions of a Pace (what one process measured of its
// window) and what the window had left; leases.ts keeps the state and applies them. The model is Google's
// Doorman: a lease is a value with its length, and sizing is an algorithm of its own. Written by hand with
// leases.ts: docs/decisions.md#leases.

/** A lease covers this long of the process's demand on its window. */
export const leaseCoverMs = 250;
/** A lease's unused points go back to the window this long after its last grant. */
export const leaseMs = 500;
/**
 * How long the store holds a window's points as possibly out in leases: a lease's length, and as long
 * again for its give-back to arrive late (a busy event loop). A refusal asks at most this long a wait
 * while a hold runs.
 */
export const holdMs = 1_000;
/**
 * A lease taken far from its window's end (see leaseTerms) covers this long of the demand, and its unused
 * points go back `longLeaseMs` after its grant (a steady demand uses it up first); its hold lasts as much
 * longer as a short one's.
 */
export const longCoverMs = 3_000;
export const longLeaseMs = 4_000;
/** Far from the window's end: what it has left would last this many long leases at its pace. */
export const farLeases = 8;
/** The most points one lease holds, whatever the demand: a crash under-admits by at most this many. */
export const maxLease = 10_000;
/** An exhausted window is asked again at most this often (points given back by a stopping process). */
export const recheckMs = 1_000;

/** What one process measured of its window's pace, as of its last take in it. */
export type Pace = {
  /** When the last grant came (0: none yet in this window), and the points used since. */
  grantedAt: number;
  usedSinceGrant: number;
  /** Points this process used of the window per millisecond, as of its last take. */
  demandPerMs: number;
  /**
   * The fastest the window was taken (points per millisecond, by every process) between two of this
   * process's takes in it; unknown before its second.
   */
  peakPacePerMs?: number;
};

/** A window this process has not taken from yet. */
export const unknownPace = (): Pace => ({ grantedAt: 0, usedSinceGrant: 0, demandPerMs: 0 });

/** What a take asks for: `want` points, given back `lengthMs` after the grant, held by the store `holdMs`. */
export type Terms = { want: number; lengthMs: number; holdMs: number };

/**
 * The next lease of a window that had `left` points at the last take: long while they would last
 * farLeases long leases at its pace (the fastest seen between two of this process's takes in the window,
 * or its demand now; unknown before its second take in the window: short), else short. Its size is the
 * process's demand over the lease's cover, one point while that is unknown, an eighth of what is left at
 * most; a single point is used at once, so only a lease is held.
 */
export function leaseTerms(left: number, pace: Pace): Terms {
  const pacePerMs = Math.max(pace.peakPacePerMs ?? Number.POSITIVE_INFINITY, pace.demandPerMs);
  const long = left >= farLeases * longLeaseMs * pacePerMs;
  const want = Math.min(
    maxLease,
    Math.max(1, Math.floor(left / 8)),
    Math.max(1, Math.ceil(pace.demandPerMs * (long ? longCoverMs : leaseCoverMs))),
  );
  const lengthMs = long ? longLeaseMs : leaseMs;
  return { want, lengthMs, holdMs: want > 1 ? lengthMs + holdMs - leaseMs : 0 };
}

/** The pace as a take at `at` measures it: the demand since the last grant (over a millisecond at least). */
export function measured(pace: Pace, at: number): Pace {
  if (pace.grantedAt === 0) return pace;
  return { ...pace, demandPerMs: pace.usedSinceGrant / Math.max(1, at - pace.grantedAt) };
}

/**
 * The pace after a grant at `at`. `othersTook`: the points the other processes took from the window since
 * this process's last take. The fastest of the window is kept: after a pause the window is as busy as it
 * was before it. What the others took is leases, each of a quarter second of their demand at least: over
 * less time, one lease landing between two takes of this process would read as a rush. A new window
 * (`sameWindow` false) starts with its peak unknown.
 */
export function afterGrant(pace: Pace, at: number, othersTook: number, sameWindow: boolean): Pace {
  const othersPerMs = Math.max(0, othersTook) / Math.max(leaseCoverMs, at - pace.grantedAt);
  const peakPacePerMs =
    sameWindow && pace.grantedAt > 0
      ? Math.max(pace.peakPacePerMs ?? 0, othersPerMs + pace.demandPerMs)
      : undefined;
  return { grantedAt: at, usedSinceGrant: 0, demandPerMs: pace.demandPerMs, peakPacePerMs };
}

/**
 * When a window the store found exhausted at `at` is asked again: within recheckMs, or when the points
 * held elsewhere come back (`heldUntil`) if sooner. A refusal while they are held asks a wait of 1 s
 * (policy.ts), and the next take must then ask the store.
 */
export function recheckAt(at: number, heldUntil: number): number {
  return Math.min(at + recheckMs, heldUntil > at ? heldUntil : Number.POSITIVE_INFINITY);
}
