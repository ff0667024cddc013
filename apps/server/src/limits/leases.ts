// Admission from leases: the request path decides in memory. A process takes a lease of points of a window
// from the shared counter store in one atomic step, and admits requests from it
// without asking the store again until it is used up. Written by hand: docs/decisions.md#leases.
//
// What holds, whatever the number of processes and instances:
// - The limit is never exceeded: the store grants no more than the window has left (take is atomic), and
//   a process admits only what it was granted.
// - No quota is stranded: a lease lasts `leaseMs`, after which its unused points go back to the window
//   (a timer, not the next request: an idle process gives back too), and the store holds the window's
//   `heldUntil` a little longer (`holdMs`). A take that gets nothing while a hold runs is told when the
//   points come back (`heldMs`, at most holdMs), and an exhausted window is asked again then; past the
//   hold, "exhausted" means used. Unused points also go back on a graceful stop (release); a crash loses
//   them, so the window under-admits by at most the crashed process's lease, never over-admits.
// - The lease size is the process's own demand: what it used of the window in the last `leaseCoverMs` at
//   its current pace, one point while that is unknown (the first request, or after a pause), never more
//   than an eighth of what the window had left at the last take (near the limit every take is a single
//   point), nor than `maxLease`. So a busy key asks the store a few times a second whatever its traffic,
//   and a quiet one takes single points: exact, and nothing held.
// - Far from the window's end a lease is long (`longLeaseMs`, covering `longCoverMs` of the demand): while
//   what the window has left would last `farLeases` long leases at the fastest pace every process took it
//   in the window, no process can be refused while a long lease is out, unless that pace grows that much
//   within one (a pause does not lower it). So a busy key far from its limit asks the store about once a
//   second or less, and near the limit leases are short again, so that a refusal while points are held
//   elsewhere asks at most holdMs.
// - `remaining` is exact with one process: the store's count with this process's unused points given back.
//   With several it is as of this process's last take, and counts the other processes' unused leases as
//   used, so it never claims what another process holds; it never rises between this process's answers
//   in a window, and it says 0 only when the window is used (nothing held elsewhere at the last take).
// - What was admitted is counted apart from what is leased: each process adds the points it used to the
//   window's admitted count (`admittedCount`) every `report`, so operators read admissions exactly (every
//   process's as of its last report) and leased points as reserved, not as used. Reports go to the shared
//   store only: while a stand-in answers (Redis out), they wait.
// - An outage of a shared store (CounterStore.epoch) costs no quota. Points leased from it before the
//   outage stay good through it and after it (they are still counted there), unless it came back without
//   its data. Points from the stand-in are dropped when the shared store answers again, and what they
//   admitted is added to the shared window first (`owed`), so the window counts every admission once.
import { randomUUID } from 'node:crypto';
import { type CounterStore, fallbackEpoch } from './counter-store.js';
import type { Lease } from './lease.js';
import { LeaseReports, leasedCountReported } from './lease-reports.js';

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
/** How many times one take may go round (see take) before its request fails. */
const maxRounds = 10_000;
/** An exhausted window is asked again at most this often (points given back by a stopping process). */
export const recheckMs = 1_000;

/**
 * A window as its caller sees it. One convention for time wherever a window is held: `resetAt`, when it
 * ends, in epoch milliseconds (a window not started yet: a full window from now).
 */
export type WindowView = { limit: number; remaining: number; resetAt: number };

/**
 * A take's answer. `heldMs`, on a refusal: points of the window are held in leases for that long at most
 * and may come back then (0: the window is used until it ends).
 */
export type Taken = WindowView & { admitted: boolean; heldMs: number };

/**
 * The next lease of the window: long while what the window had left at the last take would last farLeases
 * long leases at its pace (the fastest seen between two of this process's takes in the window, or its
 * demand now; unknown before its second take in the window: short), else short. Its size is the process's
 * demand over the lease's cover, one point while that is unknown, an eighth of what is left at most; a
 * single point is used at once, so only a lease is held.
 */
function leaseTerms(limit: number, lease: Lease) {
  const left = limit - lease.used;
  const pacePerMs = Math.max(lease.peakPacePerMs ?? Number.POSITIVE_INFINITY, lease.demandPerMs);
  const long = left >= farLeases * longLeaseMs * pacePerMs;
  const want = Math.min(
    maxLease,
    Math.max(1, Math.floor(left / 8)),
    Math.max(1, Math.ceil(lease.demandPerMs * (long ? longCoverMs : leaseCoverMs))),
  );
  const lengthMs = long ? longLeaseMs : leaseMs;
  return { want, lengthMs, holdMs: want > 1 ? lengthMs + holdMs - leaseMs : 0 };
}

export class Leases {
  readonly #leases = new Map<string, Lease>();
  /** Give-backs and reports of leases dropped mid-window (a limit changed), which a stop waits for. */
  readonly #settling = new Set<Promise<void>>();
  /** Set by release: a stop gave every point back, and nothing is returned later. */
  #released = false;
  /** This process's name as a holder of points (CounterStore.take): another's holds are told apart. */
  readonly #holder = randomUUID();
  readonly #reports: LeaseReports;
  constructor(
    private readonly store: CounterStore,
    private readonly now: () => number,
  ) {
    this.#reports = new LeaseReports(store, this.#holder, now);
  }

  /** Takes one point of the window `key` for a request: from this process's lease, else from a new one. */
  async take(key: string, limit: number, windowMs: number): Promise<Taken> {
    // A take goes round while it waits for refills others started (near a limit, leases are single points
    // and many requests share each), or when a store coming back dropped its points. Past a few rounds each
    // yields to the event loop, so that nothing can spin it; past many, the store is at fault (it keeps
    // granting points it then disowns) and the request fails rather than waiting for ever.
    for (let round = 0; ; round++) {
      if (round >= 16) await new Promise((resolve) => setImmediate(resolve));
      if (round === maxRounds) throw new Error(`the counter store kept granting unusable points (${key})`);
      const lease = this.#current(key, limit);
      if (lease?.refill) {
        await lease.refill;
        continue;
      }
      if (lease && lease.left > 0) {
        lease.left--;
        lease.unreported++;
        lease.usedSinceGrant++;
        if (lease.epoch === fallbackEpoch) lease.owed++;
        return { admitted: true, heldMs: 0, ...this.#view(lease) };
      }
      if (lease && this.#exhaustedRecently(lease)) {
        return { admitted: false, heldMs: Math.max(0, lease.heldUntil - this.now()), ...this.#view(lease) };
      }
      await this.#refill(key, limit, windowMs, lease);
    }
  }

  /**
   * Whether `take` can decide from memory now: a point is left, a take is in flight, or the window was
   * found exhausted within recheckMs. When not, the next take asks the store.
   */
  decidesInMemory(key: string, limit: number): boolean {
    const lease = this.#current(key, limit);
    if (!lease) return false;
    return Boolean(lease.refill) || lease.left > 0 || this.#exhaustedRecently(lease);
  }

  /** Returns a point taken by `take` that the request did not use after all (another window refused it). */
  untake(key: string): void {
    const lease = this.#leases.get(key);
    if (lease && lease.resetAt > this.now()) {
      lease.left++;
      lease.unreported = Math.max(0, lease.unreported - 1);
      lease.usedSinceGrant = Math.max(0, lease.usedSinceGrant - 1);
      lease.told = Math.min(lease.limit, lease.told + 1); // the answer that counted it is withdrawn
      if (lease.epoch === fallbackEpoch) lease.owed = Math.max(0, lease.owed - 1);
      this.#returnLater(key, lease);
    }
  }

  /** The window as this process knows it, without asking the store (a full window when none is known). */
  peek(key: string, limit: number, windowMs: number): WindowView {
    const lease = this.#current(key, limit);
    return lease ? this.#view(lease) : { limit, remaining: limit, resetAt: this.now() + windowMs };
  }

  /**
   * When the window `key` ends if it is used up now, as the store has it (asked without taking any of
   * it): every point taken, none held unused by this process or, as far as the store knows, by another;
   * else 0. For a refusal of another window of the same client (policy.ts: a key out of its minute asks
   * whether its day is out too, which this process's own lease cannot say).
   */
  async usedUpUntil(key: string, limit: number, windowMs: number): Promise<number> {
    const grant = await this.store.take(key, 0, limit, windowMs, { holder: this.#holder, holdMs: 0 });
    const at = this.now();
    const lease = this.#leases.get(key);
    const ownLeft = lease && lease.resetAt === grant.resetAt ? lease.left : 0;
    return grant.used >= limit && ownLeft === 0 && grant.heldUntil <= at && grant.resetAt > at
      ? grant.resetAt
      : 0;
  }

  /** Points of the window this process admitted, and leased, and has not reported yet (see report). */
  unreported(key: string): { admitted: number; leased: number } {
    const lease = this.#leases.get(key);
    return lease && lease.resetAt > this.now()
      ? { admitted: lease.unreported, leased: lease.unreportedLeased }
      : { admitted: 0, leased: 0 };
  }

  /**
   * Adds the points each running window's requests used since the last report to its admitted count, a
   * counter that ends with the window. A report that fails is kept for the next one.
   */
  async report(): Promise<void> {
    await this.#reports.settled(); // an earlier report on its way: what fails of it goes again now
    await Promise.all([...this.#leases].map(([key, lease]) => this.#reports.report(key, lease)));
    await Promise.all(this.#settling);
  }

  /** Gives every unused point back to the store (a graceful stop), and returns nothing later; failures are ignored. */
  async release(): Promise<void> {
    this.#released = true;
    await Promise.all([...this.#leases].map(([key, lease]) => this.#return(key, lease)));
  }

  /**
   * Gives the lease's unused points back to their window now. While the store is out (a stand-in answers)
   * nothing is sent, and they stay with the lease; a give-back that fails may still have been counted (its
   * answer lost in a cut), so its points wait, unusable, and it is sent again under the same name later.
   */
  async #return(key: string, lease: Lease): Promise<void> {
    await leasedCountReported(lease);
    clearTimeout(lease.returner);
    lease.returner = undefined;
    const epoch = this.store.epoch ?? 0;
    // Ended with its window, or lost with a store that came back without its data: nothing to give back.
    if (
      lease.resetAt <= this.now() ||
      (lease.returning && epoch !== fallbackEpoch && lease.returning.epoch !== epoch)
    ) {
      lease.returning = undefined;
    }
    const later = () => {
      lease.returnAt = this.now() + leaseMs;
      this.#returnLater(key, lease);
    };
    if (epoch === fallbackEpoch) return later();
    if (!lease.returning) {
      if (lease.left <= 0 || lease.resetAt <= this.now() || lease.epoch !== epoch) return;
      lease.returning = { ...this.#reports.giveBackOf(lease, lease.left), epoch };
      // The window's count as this process knows it drops by what goes back: else the points read as
      // used by someone, and `remaining` fell by a whole lease when it went back (one process, no one
      // else taking: 43 where 47 were left).
      lease.used = Math.max(0, lease.used - lease.left);
      lease.left = 0;
    }
    const returning = lease.returning;
    if (await this.#reports.giveBack(key, lease, returning)) {
      if (lease.returning === returning) lease.returning = undefined;
      if (lease.left > 0) later(); // points untaken meanwhile
    } else if (this.#leases.get(key) === lease) later();
  }

  /**
   * Gives the lease's unused points back leaseMs after its last grant, by a timer of its own (one per
   * lease, moved by every grant), so an idle process strands nothing.
   */
  #returnLater(key: string, lease: Lease): void {
    if (this.#released || lease.returner || (lease.epoch === fallbackEpoch && !lease.returning)) return;
    const wait = Math.max(0, lease.returnAt - this.now());
    lease.returner = setTimeout(() => {
      lease.returner = undefined;
      if (this.#leases.get(key) !== lease || lease.refill) return; // dropped, or a grant on its way
      if (this.now() < lease.returnAt) this.#returnLater(key, lease);
      else void this.#return(key, lease);
    }, wait);
    lease.returner.unref();
  }

  /** Forgets leases whose windows have ended (memory stays bounded by the live windows). */
  sweep(): void {
    const now = this.now();
    for (const [key, lease] of this.#leases) {
      if (lease.resetAt <= now && !lease.refill) this.#leases.delete(key);
    }
  }

  /**
   * The live lease of `key`; a lease of an ended window, or taken under another limit, is dropped. Points
   * of a store that no longer answers are dropped too (see CounterStore.epoch), the counts kept.
   */
  #current(key: string, limit: number): Lease | undefined {
    const lease = this.#leases.get(key);
    if (!lease || lease.refill) return lease;
    const epoch = this.store.epoch ?? 0;
    if (lease.epoch !== epoch && lease.epoch !== fallbackEpoch && epoch !== fallbackEpoch) {
      // The shared store came back without its data: its points, and what they admitted, are gone.
      this.#leases.delete(key);
      return undefined;
    }
    if (lease.epoch === fallbackEpoch && epoch !== fallbackEpoch) {
      // The shared store answers again: the stand-in's points go; what they admitted is owed to it (#refill).
      lease.left = 0;
      lease.exhaustedAt = undefined;
    }
    if (lease.resetAt > this.now() && lease.limit === limit) return lease;
    this.#leases.delete(key);
    clearTimeout(lease.returner);
    // The key's limit changed mid-window: what this process holds goes back, the new limit applies; what
    // it admitted is reported.
    if (lease.limit !== limit && lease.resetAt > this.now()) {
      const settled = (async () => {
        await leasedCountReported(lease);
        await Promise.all([
          lease.left > 0 && this.#reports.giveBack(key, lease, this.#reports.giveBackOf(lease, lease.left)),
          this.#reports.report(key, lease),
        ]);
      })().then(() => {
        this.#settling.delete(settled);
      });
      this.#settling.add(settled);
    }
    return undefined;
  }

  /**
   * The store found the window exhausted, and it is not time to ask again: refuse without asking. Again
   * at the hold's end when points were held (they come back by then), else after recheckMs.
   */
  #exhaustedRecently(lease: Lease): boolean {
    return lease.exhaustedAt !== undefined && this.now() < lease.recheckAt;
  }

  /**
   * The window as this process answers it. Nothing left but points held elsewhere (a hold ran at the
   * last take): 1, not 0, since they may come back; 0 only once the window is used. Never more than an
   * earlier answer of this process in the window.
   */
  #view(lease: Lease): WindowView {
    let remaining = Math.max(0, lease.limit - lease.used + lease.left);
    if (remaining === 0 && lease.heldUntil > this.now()) remaining = 1;
    lease.told = Math.min(lease.told, remaining);
    return { limit: lease.limit, remaining: lease.told, resetAt: lease.resetAt };
  }

  #refill(key: string, limit: number, windowMs: number, previous: Lease | undefined): Promise<void> {
    const lease: Lease = previous ?? {
      limit,
      left: 0,
      used: 0,
      resetAt: 0,
      epoch: 0,
      unreported: 0,
      owed: 0,
      unreportedLeased: 0,
      recheckAt: 0,
      heldUntil: 0,
      told: limit,
      grantedAt: 0,
      usedSinceGrant: 0,
      demandPerMs: 0,
      returnAt: 0,
    };
    this.#leases.set(key, lease);
    lease.refill = (async () => {
      try {
        // What a stand-in admitted in this window counts in the shared one before it leases more. A
        // give-back of this process not confirmed yet is sent again beside the take (its points count
        // once): when the take finds the window exhausted, it asks again at once rather than refuse.
        await this.#reports.add(key, lease, 'owed');
        const resent = lease.returning ? this.#return(key, lease).then(() => !lease.returning) : undefined;
        // The pace since the last grant (over at least a millisecond); none known before the first.
        if (lease.grantedAt > 0) {
          lease.demandPerMs = lease.usedSinceGrant / Math.max(1, this.now() - lease.grantedAt);
        }
        const terms = leaseTerms(limit, lease);
        const grant = await this.store.take(key, terms.want, limit, windowMs, {
          holder: this.#holder,
          holdMs: terms.holdMs,
        });
        const at = this.now();
        lease.epoch = grant.epoch ?? 0;
        // Points untaken meanwhile stay with the lease while its window runs; a new window starts empty
        // (what the ended one admitted and did not report ended with it).
        // (The window's end as each engine reports it can differ by a millisecond: Redis gives a TTL.)
        const sameWindow = lease.resetAt > at;
        // The window's pace since this process's last take: what the others took, and its own demand. The
        // fastest of the window is kept: after a pause the window is as busy as it was before it. What the
        // others took is leases, each of a quarter second of their demand at least: over less time, one
        // lease landing between two takes of this process would read as a rush.
        const othersPerMs = () =>
          Math.max(0, grant.used - grant.granted - lease.used) / Math.max(leaseCoverMs, at - lease.grantedAt);
        lease.peakPacePerMs =
          sameWindow && lease.grantedAt > 0
            ? Math.max(lease.peakPacePerMs ?? 0, othersPerMs() + lease.demandPerMs)
            : undefined;
        lease.left = (sameWindow ? lease.left : 0) + grant.granted;
        if (!sameWindow) {
          lease.unreported = 0;
          lease.owed = 0;
          lease.unreportedLeased = 0;
          lease.told = limit;
        }
        if (lease.epoch !== fallbackEpoch) lease.unreportedLeased += grant.granted;
        lease.used = grant.used;
        lease.resetAt = grant.resetAt;
        lease.heldUntil = grant.heldUntil;
        const exhausted = grant.granted === 0 && !(resent && (await resent));
        lease.exhaustedAt = exhausted ? at : undefined;
        // Asked again within recheckMs, or when the points held elsewhere come back if sooner: a refusal
        // while they are held asks a wait of 1 s (policy.ts), and the next take must then ask the store.
        lease.recheckAt = Math.min(
          at + recheckMs,
          grant.heldUntil > at ? grant.heldUntil : Number.POSITIVE_INFINITY,
        );
        lease.grantedAt = at;
        lease.usedSinceGrant = 0;
        if (grant.granted > 0) {
          lease.returnAt = at + terms.lengthMs;
          this.#returnLater(key, lease);
        }
      } finally {
        lease.refill = undefined;
      }
    })();
    return lease.refill;
  }
}
