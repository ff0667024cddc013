// What the limiter needs of a shared counter store: a few atomic operations on named fixed windows. The
// algorithm (leases, bans) is written once over this interface (leases.ts, policy.ts); each engine
// implements it next to its store, with its own error translation: store/sqlite/counters.ts,
// store/postgres/counters.ts, store/redis/counters.ts; and memory-counters.ts for one process.

/** What a take got from a window, as the store saw it. */
export type Grant = {
  /** Points granted to the caller now, between 0 (the window is exhausted) and what it asked for. */
  granted: number;
  /** Points taken from the window in all (by every process), this grant included. */
  used: number;
  /** When the window ends (epoch milliseconds). */
  resetAt: number;
  /**
   * Until when points of the window may still be held unused in leases of other holders than the take's
   * (epoch milliseconds; 0 when none): the end of the latest hold while any of them holds. Points so held
   * come back by then (leases.ts: a lease's unused points go back within its length), so a take that got
   * nothing while it lies ahead may get points then; past it, a window the store calls exhausted is used.
   */
  heldUntil: number;
  /** For a store that can fall back (CounterStore.epoch): the epoch whose store granted the points. */
  epoch?: number;
};

/** The epoch of a stand-in store's points (CounterStore.epoch): this process's memory, while Redis is out. */
export const fallbackEpoch = -1;

/**
 * Who takes points for a lease, and how long it may hold them unused (CounterStore.take); `id` names the
 * take where its answer can be lost (a network store), so that it can be undone (CounterStore.undo).
 * `seen`: the window as the taker last saw it, its end and its count then, while it has more than
 * seenEndMarginMs left. A store that pays a command to read a window's end (Redis) may answer that end
 * instead while the count it finds is still at least `used`, for points used at once (`holdMs` 0) or held
 * until seenEndMarginMs before it at the latest; a window ended early by an operator and taken from again
 * elsewhere has a lower count, so it is read.
 */
export type Holder = {
  holder: string;
  holdMs: number;
  id?: string;
  seen?: { resetAt: number; used: number };
};

/**
 * How much of a seen window must be left for its end to be answered unread (Holder.seen): far more than a
 * take's latency and the clocks of a host's processes apart, so that a window known to run does.
 */
export const seenEndMarginMs = 1_000;

/** The holder name of the whole window's holds when several hold at once. */
export const severalHolders = '*';

export interface CounterStore {
  /**
   * Atomically takes up to `want` of the `limit` points of the window named `key`; a window of
   * `windowMs` starts with the first take after the previous one ended. `lease`: who takes (one name per
   * process), and how long the points granted may be held unused (`holdMs`, 0 for points used at once):
   * the window's hold then lasts until now + holdMs at least, and records whether that holder alone holds.
   */
  take(key: string, want: number, limit: number, windowMs: number, lease?: Holder): Promise<Grant>;
  /**
   * Gives back points taken but not used, while the window ending at `resetAt` (as its take answered it)
   * still runs: never to a later window of the same name (one started over after a delete). `id` names the
   * give-back where an answer can be lost on the way (a network store): the same id given back again
   * counts once, so a give-back whose answer was lost can be retried.
   */
  giveBack(key: string, points: number, resetAt: number, id?: string): Promise<void>;
  /**
   * Undoes the take named `id` of the window `key` whose answer never came (it timed out, the connection
   * failed): its points go back if it was carried out, and it grants nothing if it arrives later. Only a
   * store whose answers can be lost has it (Redis, under insurance: insured.ts).
   */
  undo?(key: string, id: string): Promise<void>;
  /** The points taken from the window named `key` and when it ends; `{ used: 0, resetAt: 0 }` when none runs. */
  read(key: string): Promise<{ used: number; resetAt: number }>;
  /** When the window or mark named `key` ends (epoch milliseconds), or 0 when none runs. */
  endsAt(key: string): Promise<number>;
  /** Sets a mark named `key` (a ban) that lasts `ms`, replacing any window or mark of that name. */
  mark(key: string, ms: number): Promise<void>;
  /** Ends the window or mark named `key` now. */
  delete(key: string): Promise<void>;
  /** Deletes windows and marks that have ended (where the engine does not expire them itself). */
  sweep(): Promise<number>;
  /**
   * The windows and marks running now whose names start with `prefix` (every key's ban: bans.ts), with
   * when each ends, in one call however many keys there are: so that a process can know every ban without
   * asking the store per key. An engine that finds names by prefix in an index (SQLite, PostgreSQL,
   * memory) lists its own rows, and `enlist` and `delist` do nothing there; Redis keeps a list of its own
   * (no scan of the keyspace), which they write beside the window or mark they name.
   */
  listed(prefix: string): Promise<Map<string, number>>;
  /** Puts `name` (starting with `prefix`) on the list read by `listed`, until `until` (epoch ms). */
  enlist(prefix: string, name: string, until: number): Promise<void>;
  /** Takes `name` off the list read by `listed`. */
  delist(prefix: string, name: string): Promise<void>;
  /**
   * Which store answers now, for a store that stands in for a shared one while it is out (Redis, with this
   * process's memory): the shared store's epoch (0, 1, …: a new one each time it comes back having lost its
   * data), or fallbackEpoch while the stand-in answers. Points leased from the shared store stay good
   * through an outage and after it, while its epoch holds; points from the stand-in are dropped when the
   * shared store answers again, and what they admitted is added to it then (leases.ts). Absent: always
   * the same store.
   */
  readonly epoch?: number;
  /**
   * For a store that can lose its data while it answers (Redis: flushed): the number of its latest data
   * check begun (breaker.ts's probe reads this process's marker). What was done after the last check that
   * found the data kept had begun, `lostAfter` (as of the epoch's start), may have been lost with it: a
   * loss is noticed only by the check after it (leases.ts #emptied).
   */
  readonly check?: number;
  readonly lostAfter?: number;
  /** Calls `listener` when such a store is found without its data (the new epoch begun). */
  onLostData?(listener: () => void): void;
}
