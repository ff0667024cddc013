// The policy on the memory counters, with the clock moved by hand (vitest's fake timers drive Date.now):
// no real sleeps. The engines' own counters are tested against the real engines (test/every-topology/counters.test.ts).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { propagationMs } from '../bounds.js';
import { holdMs } from './leases.js';
import { memoryCounters } from './memory-counters.js';
import { createRateLimiter, type Decision } from './policy.js';

const memory = memoryCounters();

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(new Date('2026-11-22T12:00:00Z'));
});
afterEach(() => vi.useRealTimers());

const key = (id: string, perMinute: number, perDay: number) => ({
  kind: 'key' as const,
  id,
  perMinute,
  perDay,
});
const outcome = (d: Decision) => (d.allowed ? 'ok' : d.code);

describe('createRateLimiter', () => {
  it('admits the per-minute quota, then limits until the minute resets', async () => {
    const limiter = createRateLimiter(memory, {
      ban: { threshold: 10, seconds: 900 },
      anonymousPerMinute: 30,
    });
    const subject = key('a', 3, 100);
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.consume(subject));
    expect(decisions.map(outcome)).toEqual(['ok', 'ok', 'ok', 'rate_limited']);
    const last = decisions[3] as Extract<Decision, { allowed: false }>;
    expect(last.retryAfterMs).toBeGreaterThan(59_000);
    expect(last.windows.map((w) => [w.name, w.remaining])).toEqual([
      ['minute', 0],
      ['day', 97],
    ]);
    vi.advanceTimersByTime(60_001);
    expect(outcome(await limiter.consume(subject))).toBe('ok');
  });

  it('does not burn day quota on a minute rejection, and refunds the minute on a day rejection', async () => {
    const limiter = createRateLimiter(memory, {
      ban: { threshold: 10, seconds: 900 },
      anonymousPerMinute: 30,
    });
    const subject = key('b', 2, 3);
    const first = [];
    for (let i = 0; i < 3; i++) first.push(outcome(await limiter.consume(subject)));
    expect(first).toEqual(['ok', 'ok', 'rate_limited']);
    vi.advanceTimersByTime(60_001);
    expect(outcome(await limiter.consume(subject))).toBe('ok'); // the third of the day
    const dayLimited = (await limiter.consume(subject)) as Extract<Decision, { allowed: false }>;
    expect(dayLimited.code).toBe('rate_limited');
    expect(dayLimited.retryAfterMs).toBeGreaterThan(86_000_000); // until the day resets
    expect(dayLimited.windows.map((w) => [w.name, w.remaining])).toEqual([
      ['minute', 1], // refunded: the rejected request did not count
      ['day', 0],
    ]);
  });

  it('bans a key that goes on past the threshold within a minute, for the ban length', async () => {
    const limiter = createRateLimiter(memory, {
      ban: { threshold: 2, seconds: 300 },
      anonymousPerMinute: 30,
    });
    const subject = key('c', 1, 100);
    const outcomes = [];
    for (let i = 0; i < 5; i++) outcomes.push(outcome(await limiter.consume(subject)));
    expect(outcomes).toEqual([
      'ok',
      'rate_limited',
      'rate_limited',
      'temporarily_banned',
      'temporarily_banned',
    ]);
    vi.advanceTimersByTime(200_000);
    const still = (await limiter.consume(subject)) as Extract<Decision, { allowed: false }>;
    expect(still.code).toBe('temporarily_banned');
    expect(still.retryAfterMs).toBeLessThanOrEqual(100_000);
    vi.advanceTimersByTime(100_001);
    expect(outcome(await limiter.consume(subject))).toBe('ok');
  });

  it('starts one ban however many refused requests cross the threshold at once', async () => {
    const limiter = createRateLimiter(memoryCounters(), {
      ban: { threshold: 2, seconds: 300 },
      anonymousPerMinute: 30,
    });
    const subject = key('crowd', 1, 100);
    expect(outcome(await limiter.consume(subject))).toBe('ok');
    const decisions = await Promise.all(Array.from({ length: 200 }, () => limiter.consume(subject)));
    expect(decisions.filter((d) => !d.allowed && d.banStarted)).toHaveLength(1);
    expect(decisions.filter((d) => outcome(d) === 'temporarily_banned').length).toBeGreaterThan(190);
    await limiter.close();
  });

  it('while another process holds points of the window, a refusal asks at most holdMs and counts no violation', async () => {
    const shared = memoryCounters();
    const options = { ban: { threshold: 1, seconds: 300 }, anonymousPerMinute: 30 };
    const [a, b] = [createRateLimiter(shared, options), createRateLimiter(shared, options)];
    const subject = key('spread', 40, 1000);
    await Promise.all([a.consume(subject), a.consume(subject)]); // A: a point, then a lease of 4
    const seen: Decision[] = [];
    for (let i = 0; i < 40; i++) seen.push(await b.consume(subject));
    const refusals = seen.filter((d): d is Extract<Decision, { allowed: false }> => !d.allowed);
    expect(seen.filter((d) => d.allowed)).toHaveLength(35);
    expect(refusals.map((d) => d.code)).toEqual(Array(5).fill('rate_limited')); // no ban at threshold 1
    expect(Math.max(...refusals.map((d) => d.retryAfterMs))).toBeLessThanOrEqual(holdMs);
    await vi.advanceTimersByTimeAsync(holdMs); // A returns its 3 unused points meanwhile (leaseMs after its grant)
    const after = [];
    for (let i = 0; i < 4; i++) after.push(outcome(await b.consume(subject)));
    expect(after).toEqual(['ok', 'ok', 'ok', 'rate_limited']);
    await Promise.all([a.close(), b.close()]);
  });

  it('confirms a ban of record before it takes a lease: a banned key uses no quota of any window', async () => {
    // Another process banned the key (the ban of record in the shared store); this one never saw it.
    await memory.mark('ban:banned-elsewhere', 900_000);
    const limiter = createRateLimiter(memory, {
      ban: { threshold: 10, seconds: 900 },
      anonymousPerMinute: 30,
    });
    const subject = key('banned-elsewhere', 100, 1000);
    for (let i = 0; i < 5; i++) expect(outcome(await limiter.consume(subject))).toBe('temporarily_banned');
    expect(await memory.read('minute:banned-elsewhere')).toEqual({ used: 0, resetAt: 0 });
    expect(await memory.read('day:banned-elsewhere')).toEqual({ used: 0, resetAt: 0 });
    await limiter.close();
  });

  it('new terms end a ban, and no ban forms while they propagate (an instance may judge by the old ones)', async () => {
    const limiter = createRateLimiter(memory, {
      ban: { threshold: 2, seconds: 900 },
      anonymousPerMinute: 30,
    });
    const subject = key('new-terms', 1, 100);
    const run = async (n: number) => {
      const seen = [];
      for (let i = 0; i < n; i++) seen.push(outcome(await limiter.consume(subject)));
      return seen;
    };
    expect(await run(4)).toEqual(['ok', 'rate_limited', 'rate_limited', 'temporarily_banned']);
    await limiter.termsChanged('new-terms');
    // Still refused past the limits this instance applies, but never banned within the propagation bound.
    expect(await run(6)).toEqual(Array(6).fill('rate_limited'));
    vi.advanceTimersByTime(propagationMs + 1);
    expect(await run(3)).toEqual(['rate_limited', 'rate_limited', 'temporarily_banned']);
    await limiter.close();
  });

  it('limits requests without a key per address, and never bans an address', async () => {
    const limiter = createRateLimiter(memory, { ban: { threshold: 1, seconds: 300 }, anonymousPerMinute: 2 });
    const outcomes = [];
    for (let i = 0; i < 5; i++)
      outcomes.push(outcome(await limiter.consume({ kind: 'address', address: '203.0.113.9' })));
    expect(outcomes).toEqual(['ok', 'ok', 'rate_limited', 'rate_limited', 'rate_limited']);
    expect(outcome(await limiter.consume({ kind: 'address', address: '203.0.113.10' }))).toBe('ok');
  });
});
