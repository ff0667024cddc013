// The stand-in store (this process's memory, while Redis is out) answers a look as the engines do
// (test/every-topology/counters.test.ts holds them to it): a take of nothing starts no window.
import { describe, expect, it } from 'vitest';
import { memoryCounters } from './memory-counters.js';

describe('memoryCounters', () => {
  it('a look (a take of nothing) grants nothing and starts no window', async () => {
    const counters = memoryCounters();
    expect(await counters.take('minute:look', 0, 8, 60_000)).toMatchObject({ granted: 0, used: 0 });
    expect(await counters.read('minute:look')).toEqual({ used: 0, resetAt: 0 });
    await counters.take('minute:look', 3, 8, 60_000);
    expect(await counters.take('minute:look', 0, 8, 60_000)).toMatchObject({ granted: 0, used: 3 });
    expect(await counters.read('minute:look')).toMatchObject({ used: 3 });
  });
});
