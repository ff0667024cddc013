// A lease as leases.ts keeps it: one process's points of one window, and what of them it has used, reported
// and given back. The data only: leases.ts decides admissions from it, lease-reports.ts reports it.

export type Lease = {
  limit: number;
  /** Points granted to this process and not used yet. */
  left: number;
  /** The window's points taken in all, as of this process's last take. */
  used: number;
  resetAt: number;
  /** The counter store's epoch of the points in `left` (see CounterStore.epoch). */
  epoch: number;
  /** Points used by requests and not yet added to the window's admitted count (see report). */
  unreported: number;
  /** Admissions from a stand-in's points not yet added to the shared window (see CounterStore.epoch). */
  owed: number;
  /** Points leased from the shared store (or owed to it) not yet added to the window's leased count. */
  unreportedLeased: number;
  /**
   * The report to the leased count on its way, if any: until it answers, its points are neither
   * unreported nor known to be counted, so a give-back waits for it (leasedCountReported).
   */
  reportingLeased?: Promise<void>;
  /** When the store last granted nothing (the window is exhausted), and when to ask it again. */
  exhaustedAt?: number;
  recheckAt: number;
  /** The store's heldUntil at the last take (CounterStore's Grant). */
  heldUntil: number;
  /** The lowest `remaining` this process has answered in the window: no answer says more. */
  told: number;
  /** When the last grant came, and the points used since: the demand is measured from them. */
  grantedAt: number;
  usedSinceGrant: number;
  /** When the unused points go back (the lease's length after its last grant), and the timer doing it. */
  returnAt: number;
  returner?: NodeJS.Timeout;
  /**
   * Points on their way back that the store has not confirmed (it is out, or the answer was lost), with
   * the give-back's name: retried under that name until it answers, so they count once either way. This
   * process admits nothing from them meanwhile.
   */
  returning?: GiveBack & { epoch: number };
  /** Points this process used of the window per millisecond, as of its last take. */
  demandPerMs: number;
  /**
   * The fastest the window was taken (points per millisecond, by every process) between two of this
   * process's takes in it; unknown before its second.
   */
  peakPacePerMs?: number;
  /** The take in flight, which every request waiting for this window shares. */
  refill?: Promise<void>;
};

/** Points on their way back to a window, and what of them goes off its leased count; `id` names it. */
export type GiveBack = { points: number; reportedLeased: number; id: string };
