// Usage metering: per key and UTC day, the requests the rate limiter admitted, limited (429) and refused
// while banned. Counted in this process's memory (a Map increment per request, nothing else on the request
// path) and added to the store every usageFlushMs and at a graceful stop, so a crash loses at most that
// interval of this process's counts. Days older than the retention are deleted hourly. Written by hand:
// docs/decisions.md#usage-meter.

import type { Logger } from 'pino';
import { propagationMs } from '../bounds.js';
import type { KeyDayCounts, UsageStore } from '../store/operator-records.js';
import { dayMs, utcDay } from './days.js';

/** How often counts are written to the store (the most a crash can lose). */
export const usageFlushMs = propagationMs;

export type Outcome = 'admitted' | 'limited' | 'banned';

export class UsageMeter {
  /** Counts not written yet, by key and day. */
  #pending = new Map<string, KeyDayCounts>();
  /** Counts being written now (still this process's until the store has them). */
  #writing: KeyDayCounts[] = [];
  /** The write in flight, if any. */
  #flushing: Promise<void> | undefined;
  #day = { name: '', endsAt: 0 };
  readonly #timers: NodeJS.Timeout[];

  constructor(
    private readonly store: UsageStore,
    private readonly logger: Logger,
    private readonly options: { retentionDays: number; flushMs?: number },
    private readonly now = () => Date.now(),
  ) {
    const flush = setInterval(() => void this.flush(), options.flushMs ?? usageFlushMs);
    const prune = setInterval(() => void this.prune(), 3_600_000);
    this.#timers = [flush, prune];
    for (const timer of this.#timers) timer.unref();
    void this.prune();
  }

  /** Counts one request of the key (called by the rate limiter's middleware for every decision on a key). */
  record(keyId: string, outcome: Outcome): void {
    const day = this.#today();
    const name = `${keyId} ${day}`;
    let counts = this.#pending.get(name);
    if (!counts) {
      counts = { keyId, day, admitted: 0, limited: 0, banned: 0 };
      this.#pending.set(name, counts);
    }
    counts[outcome]++;
  }

  /** This process's counts of the key not in the store yet, for the days from `from` to `to`. */
  unwritten(keyId: string, from: string, to: string): KeyDayCounts[] {
    return [...this.#writing, ...this.#pending.values()].filter(
      (c) => c.keyId === keyId && c.day >= from && c.day <= to,
    );
  }

  /**
   * Adds the pending counts to the store; when it fails, they stay pending for the next try. One write at
   * a time: a flush called while another is in flight (a graceful stop during a timer's write) waits for
   * it, then writes what is pending after it.
   */
  async flush(): Promise<void> {
    while (this.#flushing) await this.#flushing;
    if (this.#pending.size === 0) return;
    this.#flushing = this.#write();
    try {
      await this.#flushing;
    } finally {
      this.#flushing = undefined;
    }
  }

  async #write(): Promise<void> {
    this.#writing = [...this.#pending.values()];
    this.#pending = new Map();
    try {
      await this.store.add(this.#writing);
    } catch (error) {
      for (const c of this.#writing) this.#merge(c);
      this.logger.warn(
        { failure: { type: (error as Error).name, message: (error as Error).message } },
        'usage could not be written: kept in memory for the next try',
      );
    } finally {
      this.#writing = [];
    }
  }

  /** Stops the timers and writes what is pending (a graceful stop). */
  async close(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer);
    await this.flush();
  }

  async prune(): Promise<void> {
    const before = utcDay(this.now() - this.options.retentionDays * dayMs);
    await this.store.prune(before).catch(() => 0); // retried within the hour
  }

  #merge(counts: KeyDayCounts): void {
    const name = `${counts.keyId} ${counts.day}`;
    const into = this.#pending.get(name);
    if (!into) return void this.#pending.set(name, { ...counts });
    into.admitted += counts.admitted;
    into.limited += counts.limited;
    into.banned += counts.banned;
  }

  /** Today's name, computed once a day rather than per request. */
  #today(): string {
    const now = this.now();
    if (now >= this.#day.endsAt) {
      this.#day = { name: utcDay(now), endsAt: (Math.floor(now / dayMs) + 1) * dayMs };
    }
    return this.#day.name;
  }
}
