// Counters in this process's memory: exact for one process, per process for several. They stand in for
// Redis while it is unreachable (insured.ts) and serve the limiter's own tests. Written by
// hand: docs/decisions.md#memory-counters.
import { type CounterStore, severalHolders } from './counter-store.js';

export function memoryCounters(now = () => Date.now()): CounterStore {
  type Window = { points: number; resetAt: number; heldUntil: number; heldBy?: string };
  const counted = new Map<string, Window>();
  const live = (key: string) => {
    const window = counted.get(key);
    if (window && window.resetAt <= now()) counted.delete(key);
    else return window;
  };
  return {
    async take(key, want, limit, windowMs, lease) {
      let window = live(key);
      // A take of nothing (a look: leases.ts inStore) starts no window, as on every engine.
      if (!window && want === 0) return { granted: 0, used: 0, resetAt: now() + windowMs, heldUntil: 0 };
      if (!window) {
        window = { points: 0, resetAt: now() + windowMs, heldUntil: 0 };
        counted.set(key, window);
      }
      const granted = Math.max(0, Math.min(want, limit - window.points));
      window.points += granted;
      const at = now();
      if (granted > 0 && lease && lease.holdMs > 0) {
        const alone = window.heldUntil <= at || window.heldBy === lease.holder;
        window.heldBy = alone ? lease.holder : severalHolders;
        window.heldUntil = Math.max(window.heldUntil, at + lease.holdMs);
      }
      const others = window.heldUntil > at && window.heldBy !== lease?.holder;
      return {
        granted,
        used: window.points,
        resetAt: window.resetAt,
        heldUntil: others ? window.heldUntil : 0,
      };
    },
    async giveBack(key, points, resetAt) {
      const window = live(key);
      if (window?.resetAt === resetAt) window.points = Math.max(0, window.points - points);
    },
    async read(key) {
      const window = live(key);
      return window ? { used: window.points, resetAt: window.resetAt } : { used: 0, resetAt: 0 };
    },
    async endsAt(key) {
      return live(key)?.resetAt ?? 0;
    },
    async mark(key, ms) {
      counted.set(key, { points: 1, resetAt: now() + ms, heldUntil: 0 });
    },
    async delete(key) {
      counted.delete(key);
    },
    async listed(prefix) {
      const found = new Map<string, number>();
      for (const key of counted.keys())
        if (key.startsWith(prefix)) {
          const window = live(key);
          if (window) found.set(key, window.resetAt);
        }
      return found;
    },
    enlist: async () => {}, // the windows are the list
    delist: async () => {},
    async sweep() {
      const before = counted.size;
      for (const key of counted.keys()) live(key);
      return before - counted.size;
    },
  };
}
