// Counters in this process's memory: exact for one process, per process for several. They stand in for
// Redis while it is unreachable (insured.ts) and serve the limiter's own tests. Written by
// hand: docs/decisions.md#memory-counters.
import type { CounterStore } from './counter-store.js';

export function memoryCounters(now = () => Date.now()): CounterStore {
  const counted = new Map<string, { points: number; resetAt: number }>();
  const live = (key: string) => {
    const window = counted.get(key);
    if (window && window.resetAt <= now()) counted.delete(key);
    else return window;
  };
  return {
    async take(key, want, limit, windowMs) {
      let window = live(key);
      if (!window) {
        window = { points: 0, resetAt: now() + windowMs };
        counted.set(key, window);
      }
      const granted = Math.max(0, Math.min(want, limit - window.points));
      window.points += granted;
      return { granted, used: window.points, resetAt: window.resetAt };
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
      counted.set(key, { points: 1, resetAt: now() + ms });
    },
    async delete(key) {
      counted.delete(key);
    },
    async sweep() {
      const before = counted.size;
      for (const key of counted.keys()) live(key);
      return before - counted.size;
    },
  };
}
