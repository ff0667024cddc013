// The bans this process has seen, kept until each ends. Two uses: a banned key's requests are refused
// from memory for a few seconds at a time without a store round trip (the store holds the ban of record,
// and an operator's `keys unban` reaches every instance within that time); and while the store cannot
// be asked (Redis down or stalled), every ban this process knows of is still honoured until it ends.
import { propagationMs } from '../bounds.js';
/** The longest a ban is answered from memory before the store is asked again. */
export const banCacheMs = propagationMs;

export class BanCache {
  readonly #until = new Map<string, number>();
  readonly #checked = new Map<string, number>();
  constructor(private readonly now: () => number) {}

  /** Milliseconds left in a ban confirmed by the store within banCacheMs, else 0 (ask the store). */
  fresh(id: string): number {
    const checked = this.#checked.get(id);
    if (checked === undefined || this.now() - checked > banCacheMs) return 0;
    return this.known(id);
  }

  /** Milliseconds until a ban seen for the key is confirmed with the store again (0: at its next request). */
  recheckIn(id: string): number {
    const checked = this.#checked.get(id);
    return checked === undefined ? 0 : Math.max(0, checked + banCacheMs - this.now());
  }

  /** Milliseconds left in any ban this process has seen for the key, however long ago; 0 when none. */
  known(id: string): number {
    const until = this.#until.get(id);
    if (until === undefined) return 0;
    const left = until - this.now();
    if (left > 0) return left;
    this.forget(id);
    return 0;
  }

  set(id: string, ms: number): void {
    this.#until.set(id, this.now() + ms);
    this.#checked.set(id, this.now());
  }

  /** The store says there is no ban (it ended, or an operator lifted it). */
  forget(id: string): void {
    this.#until.delete(id);
    this.#checked.delete(id);
  }
}
