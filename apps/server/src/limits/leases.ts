// Admission from leases: the request path decides in memory. A process takes a lease of points of a window
// from the shared counter store in one atomic step, and admits requests from it
// without asking the store again until it is used up. Written by hand: docs/decisions.md#leases.
//
// What holds, whatever the number of processes and instances:
// - The limit is never exceeded: the store grants no more than the window has left (take is atomic), and
//   a process admits only what it was granted.
// - No quota is stranded: a lease lasts `leaseMs`, after which its unused points go back to the window
//   (the process's one timer, not the next request: an idle process gives back too), and the store holds the window's
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
//   window's admitted count (`admittedCount`) and those it leased to the leased count every `report`, less
//   what would add to both alike (only their difference is read), so operators read leased points not used
//   as reserved, not as used (every process's as of its last report). Reports go to the shared store only:
//   while a stand-in answers (Redis out), they wait.
// - An outage of a shared store (CounterStore.epoch) costs no quota. Points leased from it before the
//   outage stay good through it and after it (they are still counted there), unless it came back without
//   its data. Points from the stand-in are dropped when the shared store answers again, and what they
//   admitted is added to the shared window first (`owed`), so the window counts every admission once.
// - A shared store that lost its data (flushed, restarted empty) is noticed up to a probe late: what a
//   lease admitted since the last check that found the data kept, up to the points it held, is owed to the
//   window after (#emptied), so that window admits its limit and no more, and about a lease less.
import { randomUUID } from 'node:crypto';
import { type CounterStore, fallbackEpoch } from './counter-store.js';
import {
  countHeld,
  type GiveBack,
  type Lease,
  owedSince,
  type Points,
  pointsLeft,
  uncheckedAdmissions,
} from './lease.js';
import {
  emptyLedger,
  LeaseReports,
  leasedCountReported,
  recordAdmitted,
  recordLeased,
  recordUnadmitted,
} from './lease-reports.js';
import { afterGrant, leaseMs, leaseTerms, measured, recheckAt, unknownPace } from './lease-terms.js';

/** Two ends of a window this close apart are the same window's (an engine's TTL rounds; see #refill). */
const sameEndMs = 1_000;
/** How many times one take may go round (see take) before its request fails. */
const maxRounds = 10_000;
/**
 * The process's one timer (see #due) runs at most this often: give-backs due closer together go in one run,
 * a few milliseconds late at most (well within a hold's allowance for a late give-back, holdMs − leaseMs).
 */
const timerGapMs = 25;

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

/** When something of the lease is due: its unused points' return, or a give-back to send again. */
function dueAt(lease: Lease): number | undefined {
  const { points, returning } = lease;
  // A stand-in's points are never given back (they are dropped when the shared store answers again).
  const heldAt =
    points.state === 'held' && points.left > 0 && lease.window.epoch !== fallbackEpoch
      ? points.returnAt
      : Number.POSITIVE_INFINITY;
  const at = Math.min(heldAt, returning?.retryAt ?? Number.POSITIVE_INFINITY);
  return at === Number.POSITIVE_INFINITY ? undefined : at;
}

export class Leases {
  readonly #leases = new Map<string, Lease>();
  /** The leases with something due (dueAt), which the process's one timer visits. */
  readonly #pending = new Map<string, Lease>();
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  /** Give-backs and reports of leases dropped mid-window (a limit changed), which a stop waits for. */
  readonly #settling = new Set<Promise<void>>();
  /**
   * Leases dropped mid-window (a limit changed) with something still to send: their report, or a give-back
   * the store refused. Each report sends it again until it lands or the window ends (dropped, a lease is
   * no longer among the live ones a report visits: a refused report of it was lost, and its admissions
   * read as reserved until the window's end). `sending`: the attempt on its way, which a report running
   * meanwhile (the periodic one and a stop's) joins rather than sending the give-back a second time.
   */
  readonly #retiring = new Map<
    Lease,
    { key: string; back: GiveBack | undefined; sending?: Promise<void> | undefined }
  >();
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
    store.onLostData?.(() => this.#oweLost());
  }

  /**
   * At once when the shared store is found without its data, not at each key's next request: what every
   * lease owes (#emptied) is added to its key's window after, before other processes use it up.
   */
  #oweLost(): void {
    for (const [key, lease] of this.#leases) {
      const current = this.#current(key, lease.window.limit);
      if (current?.window.epoch === fallbackEpoch && current.ledger.owed > 0)
        void this.#reports.add(key, current, 'owed');
    }
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
      if (lease?.points.state === 'held') return this.#admit(lease, lease.points);
      if (lease && this.#refusedNow(lease)) {
        return {
          admitted: false,
          heldMs: Math.max(0, lease.window.heldUntil - this.now()),
          ...this.#view(lease),
        };
      }
      await this.#refill(key, limit, windowMs, lease);
    }
  }

  /**
   * This process's lease of the window `key` when it holds a point now, so that `admitHeld` admits from it
   * without the store (and without a promise); else undefined.
   */
  held(key: string, limit: number): Lease | undefined {
    const lease = this.#current(key, limit);
    return lease && !lease.refill && lease.points.state === 'held' ? lease : undefined;
  }

  /** `take` from a lease `held` returned: its point, from memory. */
  admitHeld(lease: Lease): Taken {
    if (lease.points.state !== 'held') throw new Error('no point held');
    return this.#admit(lease, lease.points);
  }

  /** A request admitted from the lease's points held. */
  #admit(lease: Lease, points: Extract<Points, { state: 'held' }>): Taken {
    countHeld(lease.checked, this.store.check ?? 0, points.left);
    lease.checked.admitted++;
    points.left--;
    if (points.left === 0) lease.points = { state: 'none' };
    recordAdmitted(lease.ledger, lease.window.epoch === fallbackEpoch);
    lease.pace.usedSinceGrant++;
    return { admitted: true, heldMs: 0, ...this.#view(lease) };
  }

  /**
   * Whether `take` can decide from memory now: a point is left, a take is in flight, or the window was
   * found exhausted within recheckMs. When not, the next take asks the store.
   */
  decidesInMemory(key: string, limit: number): boolean {
    const lease = this.#current(key, limit);
    if (!lease) return false;
    return Boolean(lease.refill) || pointsLeft(lease) > 0 || this.#refusedNow(lease);
  }

  /** Returns a point taken by `take` that the request did not use after all (another window refused it). */
  untake(key: string): void {
    const lease = this.#leases.get(key);
    if (!lease || lease.window.resetAt <= this.now()) return;
    if (lease.points.state === 'held') lease.points.left++;
    else lease.points = { state: 'held', left: 1, returnAt: this.now() }; // its lease is over: back at once
    recordUnadmitted(lease.ledger, lease.window.epoch === fallbackEpoch);
    lease.checked.admitted = Math.max(0, lease.checked.admitted - 1);
    lease.pace.usedSinceGrant = Math.max(0, lease.pace.usedSinceGrant - 1);
    lease.window.told = Math.min(lease.window.limit, lease.window.told + 1); // the answer that counted it is withdrawn
    this.#due(key, lease);
  }

  /** The window as this process knows it, without asking the store (a full window when none is known). */
  peek(key: string, limit: number, windowMs: number): WindowView {
    const lease = this.#current(key, limit);
    return lease ? this.#view(lease) : { limit, remaining: limit, resetAt: this.now() + windowMs };
  }

  /** Whether this process holds a view of the window `key` now: it took from it, and it has not ended. */
  knows(key: string, limit: number): boolean {
    return this.#current(key, limit) !== undefined;
  }

  /**
   * The window `key` as the store has it now (asked without taking any of it), for a refusal of another
   * window of the same client (policy.ts: a key out of its minute asks after its day, which this process
   * may never have taken from). `usedUpUntil`: when the window ends if it is used up (every point taken,
   * none held unused by this process or, as far as the store knows, by another), else 0. `view`: what is
   * left of it for this process (others' unused leases counted as used, as the headers say; at least 1
   * while points are held elsewhere), and its real end.
   */
  async inStore(
    key: string,
    limit: number,
    windowMs: number,
  ): Promise<{ usedUpUntil: number; view: WindowView }> {
    const grant = await this.store.take(key, 0, limit, windowMs, { holder: this.#holder, holdMs: 0 });
    const at = this.now();
    if (grant.resetAt <= at)
      return { usedUpUntil: 0, view: { limit, remaining: limit, resetAt: at + windowMs } };
    const lease = this.#leases.get(key);
    const ownLeft = lease && lease.window.resetAt === grant.resetAt ? pointsLeft(lease) : 0;
    const heldElsewhere = grant.heldUntil > at;
    const left = Math.max(0, limit - grant.used) + ownLeft;
    return {
      usedUpUntil: grant.used >= limit && ownLeft === 0 && !heldElsewhere ? grant.resetAt : 0,
      view: { limit, remaining: left === 0 && heldElsewhere ? 1 : left, resetAt: grant.resetAt },
    };
  }

  /** Points of the window this process admitted, and leased, and has not reported yet (see report). */
  unreported(key: string): { admitted: number; leased: number } {
    const lease = this.#leases.get(key);
    return lease && lease.window.resetAt > this.now()
      ? { admitted: lease.ledger.unreported, leased: lease.ledger.unreportedLeased }
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
    await Promise.all([...this.#retiring.keys()].map((lease) => this.#retire(lease)));
  }

  /** Gives every unused point back to the store (a graceful stop), and returns nothing later; failures are ignored. */
  async release(): Promise<void> {
    this.#released = true;
    clearTimeout(this.#timer);
    this.#pending.clear();
    await Promise.all([...this.#leases].map(([key, lease]) => this.#return(key, lease)));
  }

  /**
   * Gives the lease's unused points back to their window now. While the store is out (a stand-in answers)
   * nothing is sent, and they stay with the lease; a give-back that fails may still have been counted (its
   * answer lost in a cut), so its points wait, unusable, and it is sent again under the same name later.
   */
  async #return(key: string, lease: Lease): Promise<void> {
    await leasedCountReported(lease);
    const epoch = this.store.epoch ?? 0;
    // Ended with its window, or lost with a store that came back without its data: nothing to give back.
    if (
      lease.window.resetAt <= this.now() ||
      (lease.returning && epoch !== fallbackEpoch && lease.returning.epoch !== epoch)
    ) {
      lease.returning = undefined;
    }
    const later = () => {
      const at = this.now() + leaseMs;
      if (lease.returning) lease.returning.retryAt = at;
      if (lease.points.state === 'held') lease.points.returnAt = at;
      this.#due(key, lease);
    };
    if (epoch === fallbackEpoch) return later();
    if (!lease.returning) {
      const left = pointsLeft(lease);
      if (left <= 0 || lease.window.resetAt <= this.now() || lease.window.epoch !== epoch) return;
      const back = this.#reports.giveBackOf(lease, left);
      lease.returning = { ...back, epoch, retryAt: this.now() + leaseMs };
      // The window's count as this process knows it drops by what goes back: else the points read as
      // used by someone, and `remaining` fell by a whole lease when it went back (one process, no one
      // else taking: 43 where 47 were left).
      lease.window.used = Math.max(0, lease.window.used - left);
      lease.points = { state: 'none' };
    }
    const returning = lease.returning;
    if (await this.#reports.giveBack(key, lease, returning)) {
      if (lease.returning === returning) lease.returning = undefined;
      if (pointsLeft(lease) > 0) later(); // points untaken meanwhile
    } else if (this.#leases.get(key) === lease) later();
  }

  /**
   * Notes that something of the lease is due (dueAt: its unused points go back at the end of its length, a
   * give-back is sent again), for the process's one timer: not one timer per lease, so that ten thousand
   * keys cost one timer, and an idle process strands nothing.
   */
  #due(key: string, lease: Lease): void {
    const at = dueAt(lease);
    if (this.#released || at === undefined) return;
    this.#pending.set(key, lease);
    this.#arm(at);
  }

  #arm(at: number): void {
    if (this.#timer && this.#timerAt <= at) return;
    clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.#runDue(), Math.max(0, at - this.now()));
    this.#timer.unref();
  }

  /** The timer's run: gives back what is due, and arms the timer for what is due next. */
  #runDue(): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    const now = this.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [key, lease] of this.#pending) {
      const at = dueAt(lease);
      if (this.#leases.get(key) !== lease || at === undefined) {
        this.#pending.delete(key); // dropped, or nothing due any more
      } else if (at > now || lease.refill) {
        next = Math.min(next, Math.max(at, now)); // a grant on its way moves it, or it is looked at again
      } else {
        this.#pending.delete(key);
        void this.#return(key, lease);
      }
    }
    if (next !== Number.POSITIVE_INFINITY) this.#arm(Math.max(next, now + timerGapMs));
  }

  /**
   * Forgets the lease of `key` at once, its points and what it had to report (an operator started the
   * window over: what it held belongs to the window that is gone).
   */
  forget(key: string): void {
    this.#leases.delete(key);
    this.#pending.delete(key);
    for (const [lease, retiring] of this.#retiring) if (retiring.key === key) this.#retiring.delete(lease);
  }

  /** Forgets leases whose windows have ended (memory stays bounded by the live windows). */
  sweep(): void {
    const now = this.now();
    for (const [key, lease] of this.#leases) {
      if (lease.window.resetAt <= now && !lease.refill) {
        this.#leases.delete(key);
        this.#pending.delete(key);
      }
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
    const window = lease.window;
    if (window.epoch !== epoch && window.epoch !== fallbackEpoch && epoch !== fallbackEpoch)
      return this.#emptied(key, lease);
    if (window.epoch === fallbackEpoch && epoch !== fallbackEpoch) {
      // The shared store answers again: the stand-in's points go; what they admitted is owed to it (#refill).
      lease.points = { state: 'none' };
    }
    if (window.resetAt > this.now() && window.limit === limit) return lease;
    this.#leases.delete(key);
    this.#pending.delete(key);
    // The key's limit changed mid-window: what this process holds goes back, the new limit applies; what
    // it admitted is reported.
    if (window.limit !== limit && window.resetAt > this.now()) {
      const settled = (async () => {
        await leasedCountReported(lease);
        const left = pointsLeft(lease);
        this.#retiring.set(lease, {
          key,
          back: left > 0 ? this.#reports.giveBackOf(lease, left) : undefined,
        });
        await this.#retire(lease);
      })().then(() => {
        this.#settling.delete(settled);
      });
      this.#settling.add(settled);
    }
    return undefined;
  }

  /**
   * The lease of a shared store that came back without its data (flushed, restarted empty: a new epoch).
   * Its points are gone with the window they came from. What this process admitted since the last data
   * check that found the data kept began, up to the most points it held since (no more can have come from
   * lost points), is owed to the window after (added first, as a stand-in's
   * admissions are: #refill): the store lost it at a moment after that check that no process can know, and
   * the check after noticed it, up to a probe later (breaker.ts). Admissions after the loss would
   * otherwise count in no window, and a window started meanwhile (a take of this process or another's)
   * would admit its limit on top of them. What was admitted before the loss, or from that window's points,
   * counts twice: the window after admits less by those, at most the points this process held (about a
   * lease: lease-terms.ts).
   */
  #emptied(key: string, lease: Lease): Lease | undefined {
    const owed = owedSince(lease.checked, this.store.lostAfter ?? 0);
    if (owed === 0 || lease.window.resetAt <= this.now()) {
      this.#leases.delete(key);
      return undefined;
    }
    lease.points = { state: 'none' };
    lease.returning = undefined; // a give-back to the lost window
    lease.ledger = { ...emptyLedger(), unreported: owed, owed };
    // Owed, as a stand-in's admissions are: no points of any shared window held (fallbackEpoch).
    const { limit } = lease.window;
    lease.window = { ...lease.window, epoch: fallbackEpoch, used: 0, heldUntil: 0, told: limit };
    lease.checked = uncheckedAdmissions();
    return lease;
  }

  /**
   * Sends what a lease dropped mid-window still owes its window: its give-back (by its name: the store
   * counts it once however often it is sent) and its report. Forgotten once both landed, or its window ended.
   */
  #retire(lease: Lease): Promise<void> {
    const retiring = this.#retiring.get(lease);
    if (!retiring) return Promise.resolve();
    retiring.sending ??= (async () => {
      if (lease.window.resetAt > this.now()) {
        const [given] = await Promise.all([
          retiring.back ? this.#reports.giveBack(retiring.key, lease, retiring.back) : true,
          this.#reports.report(retiring.key, lease),
        ]);
        if (given) retiring.back = undefined;
        const { unreported, unreportedLeased, owed } = lease.ledger;
        if (retiring.back || unreported + unreportedLeased + owed > 0) return;
      }
      this.#retiring.delete(lease);
    })().finally(() => {
      retiring.sending = undefined;
    });
    return retiring.sending;
  }

  /**
   * The store found the window exhausted, and it is not time to ask again: refuse without asking. Again
   * at the hold's end when points were held (they come back by then), else after recheckMs.
   */
  #refusedNow(lease: Lease): boolean {
    return lease.points.state === 'refused' && this.now() < lease.points.recheckAt;
  }

  /**
   * The window as this process answers it. Nothing left but points held elsewhere (a hold ran at the
   * last take): 1, not 0, since they may come back; 0 only once the window is used. Never more than an
   * earlier answer of this process in the window.
   */
  #view(lease: Lease): WindowView {
    const window = lease.window;
    let remaining = Math.max(0, window.limit - window.used + pointsLeft(lease));
    if (remaining === 0 && window.heldUntil > this.now()) remaining = 1;
    window.told = Math.min(window.told, remaining);
    return { limit: window.limit, remaining: window.told, resetAt: window.resetAt };
  }

  #refill(key: string, limit: number, windowMs: number, previous: Lease | undefined): Promise<void> {
    const lease: Lease = previous ?? {
      window: { limit, used: 0, resetAt: 0, heldUntil: 0, epoch: 0, told: limit },
      points: { state: 'none' },
      pace: unknownPace(),
      ledger: emptyLedger(),
      checked: uncheckedAdmissions(),
    };
    this.#leases.set(key, lease);
    lease.refill = (async () => {
      try {
        // What a stand-in admitted in this window counts in the shared one before it leases more. A
        // give-back of this process not confirmed yet is sent again beside the take (its points count
        // once): when the take finds the window exhausted, it asks again at once rather than refuse.
        await this.#reports.add(key, lease, 'owed');
        const resent = lease.returning ? this.#return(key, lease).then(() => !lease.returning) : undefined;
        lease.pace = measured(lease.pace, this.now());
        const terms = leaseTerms(limit - lease.window.used, lease.pace);
        // The window as this process saw it, while it runs and the same store answers: its end need not be
        // read again (CounterStore's Holder.seen).
        const seen = lease.window;
        const known =
          seen.resetAt > this.now() && seen.epoch !== fallbackEpoch && seen.epoch === (this.store.epoch ?? 0);
        const grant = await this.store.take(key, terms.want, limit, windowMs, {
          holder: this.#holder,
          holdMs: terms.holdMs,
          ...(known && { seen: { resetAt: seen.resetAt, used: seen.used } }),
        });
        const at = this.now();
        const window = lease.window;
        // Points untaken meanwhile stay with the lease while its window runs; a new window starts empty
        // (what the ended one admitted and did not report ended with it), also one an operator started
        // over before the old one's end (its end is elsewhere). The window's end as each engine reports
        // it can differ by a millisecond (Redis gives a TTL). Ends are compared within one store only: a
        // stand-in's window (Redis out) ends elsewhere, and what the lease has to report still belongs to
        // the shared one (comparing them dropped those reports: admissions read as reserved for good).
        const moved =
          (grant.epoch ?? 0) === window.epoch && Math.abs(grant.resetAt - window.resetAt) >= sameEndMs;
        const sameWindow = window.resetAt > at && !moved;
        lease.pace = afterGrant(lease.pace, at, grant.used - grant.granted - window.used, sameWindow);
        const kept = sameWindow && lease.points.state === 'held' ? lease.points : undefined;
        const left = (kept?.left ?? 0) + grant.granted;
        if (grant.granted > 0) lease.points = { state: 'held', left, returnAt: at + terms.lengthMs };
        else lease.points = kept && left > 0 ? kept : { state: 'none' };
        window.epoch = grant.epoch ?? 0;
        if (!sameWindow) {
          lease.ledger = emptyLedger();
          window.told = limit;
        }
        if (window.epoch !== fallbackEpoch) recordLeased(lease.ledger, grant.granted);
        countHeld(lease.checked, this.store.check ?? 0, pointsLeft(lease));
        window.used = grant.used;
        window.resetAt = grant.resetAt;
        window.heldUntil = grant.heldUntil;
        const exhausted = grant.granted === 0 && !(resent && (await resent));
        if (exhausted && pointsLeft(lease) === 0) {
          lease.points = { state: 'refused', recheckAt: recheckAt(at, grant.heldUntil) };
        }
        this.#due(key, lease);
      } finally {
        lease.refill = undefined;
      }
    })();
    return lease.refill;
  }
}
