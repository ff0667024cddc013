// The insurance (insured.ts) over memory counters standing in for the shared store, with the store's
// failures made by hand: a take that fails once during a stall of this process, and an undo that fails
// once. The engines' own behaviour under real outages is tested against real Redis (test/engine-faults/).
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { SharedStoreWatch } from './breaker.js';
import type { CounterStore } from './counter-store.js';
import { insured } from './insured.js';
import { memoryCounters } from './memory-counters.js';

const watch: SharedStoreWatch = {
  name: 'Shared',
  onLost: () => {},
  onReady: () => {},
  connected: () => true,
  deadlineMs: 500,
  kept: async () => true,
  remember: async () => {},
  forget: async () => {},
  instances: async () => 1,
};

describe('insured', () => {
  it('a take that failed during a stall of this process is taken again, and its first try undone even when the first undo fails', async () => {
    const inner = memoryCounters();
    const undone: string[] = [];
    let takes = 0;
    const shared: CounterStore = {
      ...inner,
      async take(key, want, ...rest) {
        takes++;
        const grant = await inner.take(key, want, ...rest); // carried out, every time
        if (takes === 1) {
          const until = performance.now() + 450; // the event loop blocked: the answer comes too late
          while (performance.now() < until) {
            // busy
          }
          throw new Error('Command timed out');
        }
        return grant;
      },
      async undo(key, id) {
        undone.push(id);
        if (undone.length === 1) throw new Error('the undo timed out too');
        await inner.giveBack(key, 5, (await inner.read(key)).resetAt);
      },
    };
    const { counters, degraded, stop } = insured(shared, watch, pino({ level: 'silent' }));
    try {
      const grant = await counters.take('minute:k', 5, 100, 60_000, { holder: 'this', holdMs: 1_000 });
      expect(grant).toMatchObject({ granted: 5, epoch: 0 }); // from the shared store, taken again
      expect(degraded()).toBeUndefined();
      // The failed undo, tried again 500 ms later.
      await expect.poll(() => undone.length, { timeout: 2_000 }).toBe(2);
      expect(new Set(undone).size).toBe(1); // the first try's, both times
      expect((await inner.read('minute:k')).used).toBe(5);
    } finally {
      await stop();
    }
  });
});
