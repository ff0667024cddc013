// A lease as leases.ts keeps it: one process's view of one window, the points it holds of it, and what of
// them it has to report. Data only, each part owned by one module: leases.ts moves `points` from state to
// state and keeps `window`, lease-terms.ts computes `pace`, lease-reports.ts keeps `ledger`.
import type { Pace } from './lease-terms.js';

/** The window as the store answered this process's last take, and what this process has told of it. */
export type Window = {
  limit: number;
  /** The window's points taken in all (by every process), as of this process's last take. */
  used: number;
  resetAt: number;
  /** The store's heldUntil at the last take (CounterStore's Grant): points may be held elsewhere until then. */
  heldUntil: number;
  /** The counter store's epoch of the points this process holds (see CounterStore.epoch). */
  epoch: number;
  /** The lowest `remaining` this process has answered in the window: no answer says more. */
  told: number;
};

/**
 * What this process holds of the window, one state at a time:
 * - `none`: nothing; the next take asks the store.
 * - `held`: `left` points to admit from, until `returnAt`, when what is left goes back (a short lease or a
 *   long one: they differ only in that length).
 * - `refused`: the store granted nothing; requests are refused from memory until `recheckAt`, then the
 *   store is asked again.
 */
export type Points =
  | { state: 'none' }
  | { state: 'held'; left: number; returnAt: number }
  | { state: 'refused'; recheckAt: number };

/**
 * What one lease has to report, written by lease-reports.ts alone: leases.ts records admissions and grants
 * through its functions, and its reports send and clear it.
 */
export type Ledger = {
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
  /**
   * When the leased count ends, as the store answered its last addition: the count is made by its first
   * addition, `windowMs` from the store's clock then, which may be a millisecond past the window's own end;
   * a give-back off it names this end (SQLite and PostgreSQL give back only to a count ending exactly
   * there, so that nothing goes to a later window of the same name).
   */
  leasedCountEnds?: number;
};

/** Points on their way back to a window, and what of them goes off its leased count; `id` names it. */
export type GiveBack = { points: number; reportedLeased: number; id: string };

/**
 * This process's admissions in the window, and the most points it held, by the shared store's data check
 * they followed (CounterStore.check): the latest check's and the one's before, written by leases.ts alone.
 * A loss of the store's data is noticed by the check after it; what was admitted since the last check that
 * found the data kept, up to the points then held, is owed to the window after (leases.ts #emptied).
 */
export type Checked = {
  check: number;
  admitted: number;
  held: number;
  previousCheck: number;
  previous: number;
  previousHeld: number;
};

export type Lease = {
  window: Window;
  points: Points;
  pace: Pace;
  ledger: Ledger;
  checked: Checked;
  /** The take in flight, which every request waiting for this window shares. */
  refill?: Promise<void>;
  /**
   * Points given back that the store has not confirmed (it is out, or the answer was lost), with the
   * give-back's name: sent again under that name at `retryAt` (or beside the next take) until it
   * answers, so they count once either way. This process admits nothing from them meanwhile; points
   * untaken meanwhile are `held` again.
   */
  returning?: GiveBack & { epoch: number; retryAt: number };
};

/** A lease's Checked before its first admission. */
export const uncheckedAdmissions = (): Checked => ({
  check: 0,
  admitted: 0,
  held: 0,
  previousCheck: 0,
  previous: 0,
  previousHeld: 0,
});

/** `held` points held after the store's data check `check` began (at a grant, or before an admission). */
export function countHeld(checked: Checked, check: number, held: number): void {
  if (checked.check !== check) {
    checked.previousCheck = checked.check;
    checked.previous = checked.admitted;
    checked.previousHeld = checked.held;
    checked.check = check;
    checked.admitted = 0;
    checked.held = 0;
  }
  if (held > checked.held) checked.held = held;
}

/**
 * What may have been admitted from points a store lost after the data check `after` began: the admissions
 * since (the latest two checks' at most), up to the most points held since (no more could be lost).
 */
export function owedSince(checked: Checked, after: number): number {
  let admitted = 0;
  let held = 0;
  if (checked.check >= after) [admitted, held] = [checked.admitted, checked.held];
  if (checked.previousCheck >= after) {
    admitted += checked.previous;
    held = Math.max(held, checked.previousHeld);
  }
  return Math.min(admitted, held);
}

/** The points this process can admit from now. */
export const pointsLeft = (lease: Lease): number => (lease.points.state === 'held' ? lease.points.left : 0);
