// What a process's leases report to the shared counter store, beside the window itself (leases.ts): the points
// its requests used (the admitted count), the points it leased (the leased count, so that operators read
// leased points as reserved, not used), what a stand-in admitted while the shared store was out (owed), and
// the give-backs that take unused points off both. Reports go to the shared store only: while a stand-in
// answers (Redis out), they wait. Written by hand with leases.ts: docs/decisions.md#leases.
import { randomUUID } from 'node:crypto';
import { type CounterStore, fallbackEpoch } from './counter-store.js';
import type { GiveBack, Lease, Ledger } from './lease.js';

/** A window's ledger before anything was admitted or leased in it. */
export const emptyLedger = (): Ledger => ({ unreported: 0, owed: 0, unreportedLeased: 0 });

/** A request admitted from the lease; `fromStandIn`: from a stand-in's points (owed to the shared store). */
export function recordAdmitted(ledger: Ledger, fromStandIn: boolean): void {
  ledger.unreported++;
  if (fromStandIn) ledger.owed++;
}

/** An admission withdrawn (the point was untaken: another window refused the request). */
export function recordUnadmitted(ledger: Ledger, fromStandIn: boolean): void {
  ledger.unreported = Math.max(0, ledger.unreported - 1);
  if (fromStandIn) ledger.owed = Math.max(0, ledger.owed - 1);
}

/** Points granted by the shared store, to add to the window's leased count. */
export function recordLeased(ledger: Ledger, points: number): void {
  ledger.unreportedLeased += points;
}

/**
 * The counter of the points of window `key` that requests used, reported by every process (`report`), less
 * what each also leased since its last report (neither is sent: only their difference is read).
 */
export const admittedCount = (key: string) => `admitted:${key}`;
/**
 * The counter of the points of window `key` that processes of this release leased (`report`), less what
 * they gave back. What the window counts beyond it was taken by processes that report nothing (a release
 * before 2.0, during a rolling upgrade): that is counted as used, never as reserved.
 */
export const leasedCount = (key: string) => `leased:${key}`;

/** Waits until no report to the lease's leased count is on its way (a give-back counts on what it holds). */
export async function leasedCountReported(lease: Lease): Promise<void> {
  while (lease.ledger.reportingLeased) await lease.ledger.reportingLeased;
}

export class LeaseReports {
  /** Additions on their way to the store: a report waits for them (report). */
  readonly #sending = new Set<Promise<void>>();
  constructor(
    private readonly store: CounterStore,
    /** The process's name as a holder of points (CounterStore.take). */
    private readonly holder: string,
    private readonly now: () => number,
  ) {}

  /**
   * Adds what the lease's requests used since its last report to the window's admitted count, what it
   * leased to the leased count, and first what a stand-in admitted (owed) to the window itself.
   */
  async report(key: string, lease: Lease): Promise<void> {
    await this.add(key, lease, 'owed');
    // The two counts are read only as their difference (reserved: leased and not admitted; policy.ts), so
    // what would add to both alike is not sent: a point leased and used since the last report (a quiet
    // key's single points, a lease used up) costs no report. Two additions per window and process every
    // report were most of a quiet key's store calls (docs/decisions.md#what-the-limits-cost-the-store).
    const { ledger } = lease;
    const both = Math.min(ledger.unreported, ledger.unreportedLeased);
    ledger.unreported -= both;
    ledger.unreportedLeased -= both;
    await Promise.all([
      this.add(admittedCount(key), lease, 'unreported'),
      this.add(leasedCount(key), lease, 'unreportedLeased'),
    ]);
  }

  /**
   * Adds the lease's count `which` to the shared counter `counter`, which ends when the window does (a take
   * of no limit starts it). Kept for the next try when it fails or a stand-in answers instead. Taken as a
   * lease's take is (named, where the store can lose answers): one that failed but was carried out is
   * undone when the store answers again, so the next try does not count it twice.
   */
  async add(counter: string, lease: Lease, which: 'unreported' | 'owed' | 'unreportedLeased'): Promise<void> {
    const { ledger } = lease;
    const untilEnd = lease.window.resetAt - this.now();
    const points = ledger[which];
    if (points <= 0 || untilEnd <= 0 || this.store.epoch === fallbackEpoch) return;
    ledger[which] = 0;
    const windowEnds = lease.window.resetAt;
    const adding = this.store
      .take(counter, points, Number.MAX_SAFE_INTEGER, untilEnd, { holder: this.holder, holdMs: 0 })
      .then((grant) => {
        if (grant.epoch === fallbackEpoch) return false;
        if (which === 'unreportedLeased') ledger.leasedCountEnds = grant.resetAt;
        return true;
      })
      .catch(() => false)
      .then((added) => {
        if (!added && windowEnds > this.now()) ledger[which] += points; // its window still runs
        // What a stand-in admitted is now taken in the shared window by this process: leased and used.
        if (added && which === 'owed') recordLeased(ledger, points);
      })
      .finally(() => this.#sending.delete(adding));
    this.#sending.add(adding);
    if (which !== 'unreportedLeased') return adding;
    const reporting: Promise<void> = adding.finally(() => {
      if (ledger.reportingLeased === reporting) ledger.reportingLeased = undefined;
    });
    ledger.reportingLeased = reporting;
    return reporting;
  }

  /**
   * Waits for every addition on its way (a periodic report's, when a stop reports the last admissions):
   * one that fails puts its points back to be reported, and a report that did not wait would find them
   * neither sent nor counted, and a stop would close the store under it (a graceful stop left its last
   * admissions out of the window's admitted count).
   */
  async settled(): Promise<void> {
    while (this.#sending.size > 0) await Promise.all(this.#sending);
  }

  /**
   * A give-back of `points` of the lease: to its window, and off the leased count what was reported as
   * leased (what is not reported yet is simply not reported). Named, so that it can be sent again.
   */
  giveBackOf(lease: Lease, points: number): GiveBack {
    const unreported = Math.min(points, lease.ledger.unreportedLeased);
    lease.ledger.unreportedLeased -= unreported;
    return { points, reportedLeased: points - unreported, id: randomUUID() };
  }

  /**
   * Sends a give-back (again: the store counts each name once). Whether the store took all of it; a part it
   * took is not sent again (a store that cannot lose an answer does not keep names: SQLite, memory).
   */
  async giveBack(key: string, lease: Lease, back: GiveBack): Promise<boolean> {
    const [window, leased] = await Promise.allSettled([
      back.points > 0 && this.store.giveBack(key, back.points, lease.window.resetAt, back.id),
      back.reportedLeased > 0 &&
        this.store.giveBack(
          leasedCount(key),
          back.reportedLeased,
          lease.ledger.leasedCountEnds ?? lease.window.resetAt,
          `${back.id}:leased`,
        ),
    ]);
    if (window.status === 'fulfilled') back.points = 0;
    if (leased.status === 'fulfilled') back.reportedLeased = 0;
    return window.status === 'fulfilled' && leased.status === 'fulfilled';
  }
}
