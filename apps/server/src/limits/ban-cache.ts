// Bans remembered in this process for a few seconds at most, so that a banned key's requests are refused
// without a store round trip. Only a cache: the store holds the ban of record, and an operator's
// `keys unban` reaches every instance within the cache's lifetime.
/** The longest a ban is answered from memory before the store is asked again. */
export const banCacheMs = 5_000;

export class BanCache {
  readonly #until = new Map<string, number>();
  constructor(private readonly now: () => number) {}

  readonly #checked = new Map<string, number>();

  /** Milliseconds left in a cached ban, 0 when none or when the cached entry is too old to trust. */
  remaining(id: string): number {
    const until = this.#until.get(id);
    if (until === undefined) return 0;
    const now = this.now();
    const left = until - now;
    if (left <= 0 || now - (this.#checked.get(id) ?? 0) > banCacheMs) {
      this.#until.delete(id);
      this.#checked.delete(id);
      return 0;
    }
    return left;
  }

  set(id: string, ms: number): void {
    this.#until.set(id, this.now() + ms);
    this.#checked.set(id, this.now());
  }
}
