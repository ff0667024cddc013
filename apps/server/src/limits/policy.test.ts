// The policy on the memory counters, with the clock moved by hand (vitest's fake timers drive Date.now):
// no real sleeps. The engines' own counters are tested against the real engines (test/every-topology/counters.test.ts).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { propagationMs } from '../bounds.js';
import { violationFlushMs } from './bans.js';
import type { CounterStore } from './counter-store.js';
import { holdMs, recheckMs } from './lease-terms.js';
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

/**
 * `pending`, with the fake clock moved on a millisecond at a time until it is settled: a decision may wait
 * for points held in another process's lease (at most holdMs), on a timer.
 */
async function settled<T>(pending: Promise<T>): Promise<T> {
  let done = false;
  const mark = () => {
    done = true;
  };
  pending.then(mark, mark);
  for (let step = 0; !done; step++) {
    if (step > 10 * holdMs) throw new Error('the decision waited past ten holds');
    await vi.advanceTimersByTimeAsync(1);
  }
  return pending;
}

describe('createRateLimiter', () => {
  it('admits the per-minute quota, then limits until the minute resets', async () => {
    const limiter = createRateLimiter(memory, {
      ban: { threshold: 10, seconds: 900, graceSeconds: 0 },
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
      ban: { threshold: 10, seconds: 900, graceSeconds: 0 },
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
      ban: { threshold: 2, seconds: 300, graceSeconds: 0 },
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
      ban: { threshold: 2, seconds: 300, graceSeconds: 0 },
      anonymousPerMinute: 30,
    });
    const subject = key('crowd', 1, 100);
    expect(outcome(await limiter.consume(subject))).toBe('ok');
    const decisions = await Promise.all(Array.from({ length: 200 }, () => limiter.consume(subject)));
    expect(decisions.filter((d) => !d.allowed && d.banStarted)).toHaveLength(1);
    expect(decisions.filter((d) => outcome(d) === 'temporarily_banned').length).toBeGreaterThan(190);
    await limiter.close();
  });

  it('while another process holds points of the window, a request waits until they come back (at most holdMs) and is admitted with them; then the refusal names the window’s end', async () => {
    const shared = memoryCounters();
    const options = { ban: { threshold: 1, seconds: 300, graceSeconds: 0 }, anonymousPerMinute: 30 };
    const [a, b] = [createRateLimiter(shared, options), createRateLimiter(shared, options)];
    const subject = key('spread', 40, 1000);
    await Promise.all([a.consume(subject), a.consume(subject)]); // A: a point, then a lease of 4
    const seen: Decision[] = [];
    const waits: number[] = [];
    while (seen.at(-1)?.allowed !== false) {
      const asked = Date.now();
      seen.push(await settled(b.consume(subject)));
      waits.push(Date.now() - asked);
    }
    // A used 2 of its lease and gave the other 3 back at its end (leaseMs after its grant): B admitted them
    // after waiting for them, never more than holdMs.
    expect(seen.filter((d) => d.allowed)).toHaveLength(38);
    expect(Math.max(...waits)).toBeGreaterThan(10); // a decision made at once takes the 1 ms step
    expect(Math.max(...waits)).toBeLessThanOrEqual(holdMs + 1);
    // Nothing held any more: the one refusal asks the minute's real end.
    const last = seen.at(-1) as Extract<Decision, { allowed: false }>;
    expect(last.code).toBe('rate_limited');
    expect(last.retryAfterMs).toBeGreaterThan(58_000);
    await Promise.all([a.close(), b.close()]);
  });

  it('confirms a ban of record before it takes a lease: a banned key uses no quota of any window', async () => {
    // Another process banned the key (the ban of record in the shared store); this one never saw it.
    await memory.mark('ban:banned-elsewhere', 900_000);
    const limiter = createRateLimiter(memory, {
      ban: { threshold: 10, seconds: 900, graceSeconds: 0 },
      anonymousPerMinute: 30,
    });
    const subject = key('banned-elsewhere', 100, 1000);
    for (let i = 0; i < 5; i++) expect(outcome(await limiter.consume(subject))).toBe('temporarily_banned');
    expect(await memory.read('minute:banned-elsewhere')).toEqual({ used: 0, resetAt: 0 });
    expect(await memory.read('day:banned-elsewhere')).toEqual({ used: 0, resetAt: 0 });
    await limiter.close();
  });

  it('with the ban list up to date, a take from the store reads no ban of record; without one, each does', async () => {
    /** The store, with the ban of record's reads counted, and its list failing while `listFails`. */
    const counting = (listFails: boolean) => {
      const shared = memoryCounters();
      const reads = { ban: 0 };
      const store: CounterStore = {
        ...shared,
        endsAt: (name) => {
          if (name.startsWith('ban:')) reads.ban++;
          return shared.endsAt(name);
        },
        listed: (prefix) => (listFails ? Promise.reject(new Error('store out')) : shared.listed(prefix)),
      };
      return { store, reads };
    };
    const ban = { threshold: 10, seconds: 900, graceSeconds: 0 };
    // A quiet key (15 a minute: single points, each a take from the store), one request a second.
    const sendQuietly = async (store: CounterStore) => {
      const limiter = createRateLimiter(store, { ban, anonymousPerMinute: 30 });
      await vi.advanceTimersByTimeAsync(1); // the list's first read
      for (let i = 0; i < 5; i++) {
        expect(outcome(await limiter.consume(key('quiet', 15, 1000)))).toBe('ok');
        await vi.advanceTimersByTimeAsync(1_000);
      }
      await limiter.close();
    };
    const listed = counting(false);
    await sendQuietly(listed.store);
    expect(listed.reads.ban).toBe(0);
    const unlisted = counting(true);
    await sendQuietly(unlisted.store);
    expect(unlisted.reads.ban).toBe(5);
  });

  it("answers a ban started elsewhere as a ban within the list's second, though it holds a lease of the key", async () => {
    const store = memoryCounters();
    const options = { ban: { threshold: 2, seconds: 900, graceSeconds: 0 }, anonymousPerMinute: 30 };
    const [a, b] = [createRateLimiter(store, options), createRateLimiter(store, options)];
    await vi.advanceTimersByTimeAsync(1); // both read the list: empty
    // A bans the key (it met it under 1 a minute); its windows then start over (a new minute does so).
    const seenByA = [];
    for (let i = 0; i < 4; i++) seenByA.push(outcome(await a.consume(key('k', 1, 100))));
    expect(seenByA).toEqual(['ok', 'rate_limited', 'rate_limited', 'temporarily_banned']);
    await a.resetWindows('k', ['minute', 'day']);
    // B meets the key before its next look at the list, at a pace that earns long leases; from the look
    // on, every answer is the ban, though its lease has points left.
    const busy = key('k', 100_000, 1_000_000);
    const seenByB: string[] = [];
    while (Date.now() % recheckMs < recheckMs - 10) {
      seenByB.push(outcome(await b.consume(busy)));
      await vi.advanceTimersByTimeAsync(5);
    }
    expect(seenByB).toContain('ok');
    const afterLook: string[] = [];
    for (let i = 0; i < 20; i++) {
      await vi.advanceTimersByTimeAsync(5);
      afterLook.push(outcome(await b.consume(busy)));
    }
    expect(afterLook.slice(4)).toEqual(Array(16).fill('temporarily_banned'));
    await Promise.all([a.close(), b.close()]);
  });
  it('new terms end a ban, and no ban forms while they propagate (an instance may judge by the old ones)', async () => {
    const limiter = createRateLimiter(memory, {
      ban: { threshold: 2, seconds: 900, graceSeconds: 0 },
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

  it('never bans a pool of obedient clients: each meets one refusal when the window runs out, within the grace', async () => {
    const shared = memoryCounters();
    const options = { ban: { threshold: 2, seconds: 900, graceSeconds: 5 }, anonymousPerMinute: 30 };
    const processes = Array.from({ length: 4 }, () => createRateLimiter(shared, options));
    const subject = key('pool', 40, 100_000);
    // 50 clients, each sending until it is refused, waiting what it was told: a second when points are
    // held elsewhere (it tries again), the minute's end otherwise (it stops). Rounds of a second.
    const final: Extract<Decision, { allowed: false }>[] = [];
    let admitted = 0;
    let waiting = Array.from({ length: 50 }, (_, client) => client);
    for (let round = 0; waiting.length > 0 && round < 10; round++) {
      const again: number[] = [];
      await settled(
        Promise.all(
          waiting.map(async (client) => {
            for (let i = 0; ; i++) {
              const decision = await (processes[(client + i) % 4] as (typeof processes)[0]).consume(subject);
              if (decision.allowed) admitted++;
              else if (decision.retryAfterMs <= 1_000) return again.push(client);
              else return final.push(decision);
            }
          }),
        ),
      );
      waiting = again;
      await vi.advanceTimersByTimeAsync(1_000);
    }
    expect(admitted).toBe(40);
    expect(final.map((d) => d.code)).toEqual(Array(50).fill('rate_limited'));
    // The next minute, the same again: still no ban.
    vi.advanceTimersByTime(60_001);
    const next = await Promise.all(processes.map((p) => p.consume(subject)));
    expect(next.map(outcome)).toEqual(['ok', 'ok', 'ok', 'ok']);
    await Promise.all(processes.map((p) => p.close()));
  });

  it('bans a client that keeps sending past the grace of its refusal: one ban, started once', async () => {
    const shared = memoryCounters();
    const options = { ban: { threshold: 3, seconds: 900, graceSeconds: 5 }, anonymousPerMinute: 30 };
    const [a, b] = [createRateLimiter(shared, options), createRateLimiter(shared, options)];
    const subject = key('hammer', 2, 100_000);
    const seen: Decision[] = [];
    const send = async (n: number) => {
      for (let i = 0; i < n; i++) seen.push(await (i % 2 ? a : b).consume(subject));
    };
    await send(20); // refused within the grace: no ban however many
    expect(seen.slice(2).map(outcome)).toEqual(Array(18).fill('rate_limited'));
    vi.advanceTimersByTime(5_000);
    seen.length = 0;
    await Promise.all([send(6), send(6)]);
    // Each process alone passes the threshold: one ban, started by one request. The other process learns
    // of it at its next look at the store (within recheckMs), and answers it from then on.
    expect(seen.filter((d) => !d.allowed && d.banStarted)).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(recheckMs);
    await send(4);
    expect(seen.slice(-4).map(outcome)).toEqual(Array(4).fill('temporarily_banned'));
    expect(seen.filter((d) => !d.allowed && d.banStarted)).toHaveLength(1);
    await Promise.all([a.close(), b.close()]);
  });

  it("answers a limited key's refusals from memory: no store call each, the violations added in batches", async () => {
    let calls = 0;
    const shared = memoryCounters();
    const counted = new Proxy(shared, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls++;
          return value.apply(target, args);
        };
      },
    });
    const limiter = createRateLimiter(counted, {
      ban: { threshold: 1_000, seconds: 900, graceSeconds: 0 },
      anonymousPerMinute: 30,
    });
    const subject = key('hammered', 2, 100_000);
    expect((await limiter.consume(subject)).allowed).toBe(true);
    expect((await limiter.consume(subject)).allowed).toBe(true);
    expect(outcome(await limiter.consume(subject))).toBe('rate_limited'); // the first refusal asks the store
    calls = 0;
    for (let i = 0; i < 500; i++) expect(outcome(await limiter.consume(subject))).toBe('rate_limited');
    expect(calls).toBe(0); // 500 refusals within a second: nothing asked, nothing written
    await vi.advanceTimersByTimeAsync(violationFlushMs);
    expect(calls).toBe(2); // the batch: the key's terms looked at, 501 violations added in one take
    expect((await shared.read('violations:hammered')).used).toBe(501);
    await limiter.close();
  });

  it('a refusal while the batch of violations is on its way to a slow store counts them too: past the threshold, the key is banned', async () => {
    const shared = memoryCounters();
    // The real memory counters, their adds to a violations record held until released (a loaded store).
    let hold = false;
    let release: (() => void) | undefined;
    const slow = new Proxy(shared, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (name !== 'take') return value;
        return async (...args: Parameters<CounterStore['take']>) => {
          if (hold && args[0].startsWith('violations:')) await new Promise<void>((r) => (release = r));
          return shared.take(...args);
        };
      },
    });
    const limiter = createRateLimiter(slow, {
      ban: { threshold: 1, seconds: 900, graceSeconds: 0 },
      anonymousPerMinute: 30,
    });
    const subject = key('batched', 1, 100);
    expect(outcome(await limiter.consume(subject))).toBe('ok');
    expect(outcome(await limiter.consume(subject))).toBe('rate_limited'); // one violation, in memory
    hold = true;
    await vi.advanceTimersByTimeAsync(violationFlushMs); // the batch leaves for the store, and waits there
    for (let i = 0; i < 20 && !release; i++) await vi.advanceTimersByTimeAsync(1);
    expect(release).toBeDefined();
    // The second violation: with the first on its way, two, past the threshold of one.
    const third = limiter.consume(subject);
    hold = false;
    release?.();
    const decision = (await third) as Extract<Decision, { allowed: false }>;
    expect([decision.code, decision.banStarted]).toEqual(['temporarily_banned', true]);
    expect((await shared.endsAt('ban:batched')) - Date.now()).toBe(900_000);
    await limiter.close();
  });

  it('bans a key whose violations, each process under the threshold, pass it together: at the next refusal after the batches', async () => {
    const shared = memoryCounters();
    const options = { ban: { threshold: 3, seconds: 900, graceSeconds: 0 }, anonymousPerMinute: 30 };
    const processes = Array.from({ length: 4 }, () => createRateLimiter(shared, options));
    const subject = key('spread', 1, 100_000);
    expect((await (processes[0] as (typeof processes)[0]).consume(subject)).allowed).toBe(true);
    // One violation on each: none alone passes 3, and none is added until the batch.
    const first = await Promise.all(processes.map((p) => p.consume(subject)));
    expect(first.map(outcome)).toEqual(Array(4).fill('rate_limited'));
    await vi.advanceTimersByTimeAsync(violationFlushMs); // 4 in the record: past 3
    const next = (await (processes[2] as (typeof processes)[0]).consume(subject)) as Extract<
      Decision,
      { allowed: false }
    >;
    expect(next.code).toBe('temporarily_banned');
    expect(next.banStarted).toBe(true);
    await Promise.all(processes.map((p) => p.close()));
  });

  it('a client that speeds up gets the whole quota, waiting at most two holds, though another process holds a long lease', async () => {
    const shared = memoryCounters();
    const options = { ban: { threshold: 10, seconds: 900, graceSeconds: 5 }, anonymousPerMinute: 30 };
    const [a, b] = [createRateLimiter(shared, options), createRateLimiter(shared, options)];
    const subject = key('speed-up', 300, 100_000);
    let admitted = 0;
    // One request a second through A, far from the limit: A's leases grow long (covering seconds).
    for (let i = 0; i < 6; i++) {
      if ((await a.consume(subject)).allowed) admitted++;
      await vi.advanceTimersByTimeAsync(1_000);
    }
    // Then back to back through B, waiting what each refusal asks, until one asks past a second.
    const waits: number[] = [];
    for (;;) {
      const asked = Date.now();
      const decision = await settled(b.consume(subject));
      waits.push(Date.now() - asked);
      if (decision.allowed) admitted++;
      else if (decision.retryAfterMs > 1_000) break;
      else await vi.advanceTimersByTimeAsync(decision.retryAfterMs);
    }
    // A's long lease was out when B first ran short: B's request waited for its points, a hold at a time,
    // two at most (the third look answers what it reads).
    expect(Math.max(...waits)).toBeGreaterThan(10); // a decision made at once takes the 1 ms step
    expect(Math.max(...waits)).toBeLessThanOrEqual(2 * holdMs + 1);
    expect(admitted).toBe(300);
    await Promise.all([a.close(), b.close()]);
  });

  it('a key out of both windows is told the day by a process that only saw its minute run out', async () => {
    const shared = memoryCounters();
    const options = { ban: { threshold: 10, seconds: 900, graceSeconds: 5 }, anonymousPerMinute: 30 };
    const [a, b] = [createRateLimiter(shared, options), createRateLimiter(shared, options)];
    const subject = key('both', 5, 5);
    expect(outcome(await b.consume(subject))).toBe('ok'); // B's day: 1 point, as of its take
    for (let i = 0; i < 4; i++) expect(outcome(await a.consume(subject))).toBe('ok'); // A uses both up
    const refused = (await b.consume(subject)) as Extract<Decision, { allowed: false }>;
    expect(refused.code).toBe('rate_limited');
    expect(refused.retryAfterMs).toBeGreaterThan(86_000_000);
    expect(refused.windows.map((w) => [w.name, w.remaining])).toEqual([
      ['minute', 0],
      ['day', 0],
    ]);
    for (const w of refused.windows) expect(w.resetAt).toBe(Date.now() + refused.retryAfterMs);
    await Promise.all([a.close(), b.close()]);
  });

  it('usage never shows a minute above its day, unless an operator started the day over after the minute began', async () => {
    const shared = memoryCounters();
    const limiter = createRateLimiter(shared, {
      ban: { threshold: 10, seconds: 900, graceSeconds: 0 },
      anonymousPerMinute: 30,
    });
    const quota = { perMinute: 100, perDay: 1_000 };
    // Points of the minute another instance leased and has not reported yet (the counts say used), taken
    // a few milliseconds before this instance's first request began the day, as over a network.
    await shared.take('minute:clamp', 5, quota.perMinute, 60_000);
    vi.advanceTimersByTime(5);
    expect(outcome(await limiter.consume(key('clamp', quota.perMinute, quota.perDay)))).toBe('ok');
    const usage = async () =>
      Object.fromEntries(
        (await limiter.windowUsage('clamp', quota)).map((w) => [w.name, [w.used, w.reserved, w.remaining]]),
      );
    expect(await usage()).toEqual({ minute: [1, 5, 99], day: [1, 0, 999] });
    // The day started over two seconds into the minute: its one point is all it holds, the minute more.
    await limiter.resetWindows('clamp', ['day']);
    vi.advanceTimersByTime(2_000);
    expect(outcome(await limiter.consume(key('clamp', quota.perMinute, quota.perDay)))).toBe('ok');
    const after = await usage();
    expect([after.minute?.[0], after.day?.[0]]).toEqual([7, 1]);
    await limiter.close();
  });

  it('decides in memory, without a promise, exactly what consume decides, while leases of both windows hold points', async () => {
    // Two limiters on stores of their own, sent the same requests at the same instants: one through
    // consume alone, the other through admitInMemory first. A client at 20 a second, past its minute and
    // into a ban, then back after it: every decision the same, most of them made in memory.
    const options = { ban: { threshold: 3, seconds: 60, graceSeconds: 0 }, anonymousPerMinute: 30 };
    const alone = createRateLimiter(memoryCounters(), options);
    const inMemoryFirst = createRateLimiter(memoryCounters(), options);
    const subject = key('in-memory', 600, 5_000);
    const seen = (d: Decision) => [outcome(d), d.windows.map((w) => [w.name, w.remaining, w.resetAt])];
    const [expected, got] = [[] as unknown[], [] as unknown[]];
    let inMemory = 0;
    for (let i = 0; i < 2_400; i++) {
      expected.push(seen(await alone.consume(subject)));
      const decided = inMemoryFirst.admitInMemory(subject);
      if (decided) inMemory++;
      got.push(seen(decided ?? (await inMemoryFirst.consume(subject))));
      await vi.advanceTimersByTimeAsync(50);
    }
    expect(got).toEqual(expected);
    expect(new Set(expected.map((e) => (e as [string])[0]))).toEqual(
      new Set(['ok', 'rate_limited', 'temporarily_banned']),
    );
    const admitted = expected.filter((e) => (e as [string])[0] === 'ok').length;
    expect(inMemory).toBeGreaterThan(admitted / 2); // a lease's first point comes with its take
    // An address is always decided by consume (its window is one, and never banned).
    expect(inMemoryFirst.admitInMemory({ kind: 'address', address: '192.0.2.1' })).toBeUndefined();
  });

  it('limits requests without a key per address, and never bans an address', async () => {
    const limiter = createRateLimiter(memory, {
      ban: { threshold: 1, seconds: 300, graceSeconds: 0 },
      anonymousPerMinute: 2,
    });
    const outcomes = [];
    for (let i = 0; i < 5; i++)
      outcomes.push(outcome(await limiter.consume({ kind: 'address', address: '203.0.113.9' })));
    expect(outcomes).toEqual(['ok', 'ok', 'rate_limited', 'rate_limited', 'rate_limited']);
    expect(outcome(await limiter.consume({ kind: 'address', address: '203.0.113.10' }))).toBe('ok');
  });
});
