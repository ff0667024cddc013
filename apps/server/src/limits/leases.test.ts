// The lease algorithm over the memory counters (the engines' own counters run under test/ against the real
// engines), with a clock moved by hand.
import { describe, expect, it } from 'vitest';
import { type CounterStore, fallbackEpoch } from './counter-store.js';
import { admittedCount, baseLease, Leases, leaseCoverMs, maxLease, recheckMs } from './leases.js';
import { memoryCounters } from './memory-counters.js';

function setup() {
  let time = Date.parse('2026-11-23T12:00:00Z');
  const clock = {
    now: () => time,
    advance: (ms: number) => {
      time += ms;
    },
  };
  const inner = memoryCounters(clock.now);
  const asked: number[] = []; // the size of each lease asked for
  const store: CounterStore = {
    ...inner,
    take: (key, want, limit, windowMs) => {
      asked.push(want);
      return inner.take(key, want, limit, windowMs);
    },
  };
  return { clock, store, asked, leases: () => new Leases(store, clock.now) };
}

const takeAll = (leases: Leases, n: number, limit: number) =>
  Promise.all(Array.from({ length: n }, () => leases.take('minute:k', limit, 60_000)));

describe('Leases', () => {
  it('admits exactly the limit in one process, the remaining count exact after each request', async () => {
    const { leases } = setup();
    const one = leases();
    const remaining: number[] = [];
    for (let i = 0; i < 25; i++) {
      const taken = await one.take('minute:k', 20, 60_000);
      remaining.push(taken.admitted ? taken.remaining : -1);
    }
    expect(remaining).toEqual([...Array.from({ length: 20 }, (_, i) => 19 - i), -1, -1, -1, -1, -1]);
  });

  it('asks the store once per lease: an eighth of what is left at most, down to 1 near the limit', async () => {
    const big = setup();
    await takeAll(big.leases(), 150, 10_000);
    // 150 requests at once, two store calls shared by the waiters: baseLease first (no demand known yet),
    // then what the demand asks (100 points within a millisecond), capped at an eighth of what is left.
    expect(big.asked).toEqual([baseLease, Math.floor((10_000 - baseLease) / 8)]);
    const small = setup();
    const one = small.leases();
    for (let i = 0; i < 16; i++) await one.take('minute:k', 16, 60_000);
    expect(small.asked).toEqual([2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
  });

  it('sizes leases to demand: a busy window asks the store a few times a second, a quiet one takes baseLease', async () => {
    const busy = setup();
    const one = busy.leases();
    // 20 requests a millisecond for 5 s: leases grow to cover leaseCoverMs of it (5,000 points).
    for (let i = 0; i < 100_000; i++) {
      await one.take('minute:k', 1e12, 60_000);
      if (i % 20 === 19) busy.clock.advance(1);
    }
    expect(Math.max(...busy.asked)).toBe(20 * leaseCoverMs);
    expect(busy.asked.length).toBeLessThan(40); // with baseLease alone: 1,000 store calls
    expect(busy.asked.slice(-5).every((size) => size === 20 * leaseCoverMs)).toBe(true);
    // never past maxLease, whatever the pace
    const flood = setup();
    const fast = flood.leases();
    for (let i = 0; i < 60_000; i++) await fast.take('minute:k', 1e12, 60_000);
    expect(Math.max(...flood.asked)).toBe(maxLease);
    // a request every 10 ms: leases stay at baseLease
    const quiet = setup();
    const slow = quiet.leases();
    for (let i = 0; i < 300; i++) {
      await slow.take('minute:k', 1e12, 60_000);
      quiet.clock.advance(10);
    }
    expect(quiet.asked).toEqual([baseLease, baseLease, baseLease]);
  });

  it('never admits more than the limit across processes sharing a store, and under-admits by at most their leases', async () => {
    const { leases } = setup();
    const processes = [leases(), leases(), leases()];
    const taken = await Promise.all(processes.flatMap((p) => takeAll(p, 200, 500)));
    const admitted = taken.flat().filter((t) => t.admitted).length;
    expect(admitted).toBe(500); // each kept asking until the store had nothing left
  });

  it('lets a lease die with its window, and starts the next window empty', async () => {
    const { leases, clock, store } = setup();
    const one = leases();
    expect((await one.take('minute:k', 80, 60_000)).remaining).toBe(79); // holds a lease of 10
    clock.advance(60_000);
    const next = await one.take('minute:k', 80, 60_000);
    expect(next).toMatchObject({ admitted: true, remaining: 79, resetAt: clock.now() + 60_000 });
    expect((await store.take('minute:k', 100, 80, 60_000)).used).toBe(80); // 10 leased, 70 taken now
  });

  it('gives unused points back on release, so another process can use them', async () => {
    const { leases } = setup();
    const first = leases();
    await first.take('minute:k', 80, 60_000);
    await first.release();
    const second = leases();
    const admitted = (await takeAll(second, 100, 80)).filter((t) => t.admitted).length;
    expect(admitted).toBe(79);
  });

  it('asks an exhausted window again only after recheckMs', async () => {
    const { leases, clock, asked } = setup();
    const one = leases();
    await takeAll(one, 3, 2);
    const before = asked.length;
    expect((await one.take('minute:k', 2, 60_000)).admitted).toBe(false);
    expect(asked.length).toBe(before);
    clock.advance(recheckMs);
    expect((await one.take('minute:k', 2, 60_000)).admitted).toBe(false);
    expect(asked.length).toBe(before + 1);
  });

  it('returns a point untaken to the lease, and answers from memory while it holds one', async () => {
    const { leases } = setup();
    const one = leases();
    expect(one.decidesInMemory('minute:k', 80)).toBe(false);
    await one.take('minute:k', 80, 60_000);
    expect(one.decidesInMemory('minute:k', 80)).toBe(true);
    one.untake('minute:k');
    expect(one.peek('minute:k', 80, 60_000).remaining).toBe(80);
  });

  it('reports what each process admitted apart from what it leased, and keeps a failed report for the next', async () => {
    const { leases, store, clock } = setup();
    const [a, b] = [leases(), leases()];
    await takeAll(a, 7, 800); // leases 100
    await takeAll(b, 5, 800); // leases 100
    a.untake('minute:k'); // one of A's requests did not count after all
    expect(a.unreported('minute:k').admitted).toBe(6);
    const admitted = () => store.read(admittedCount('minute:k'));
    expect((await admitted()).used).toBe(0);
    await Promise.all([a.report(), b.report()]);
    expect(await admitted()).toEqual({ used: 11, resetAt: (await store.read('minute:k')).resetAt });
    expect((await store.read('minute:k')).used).toBe(200); // taken: admitted and reserved together
    expect([a.unreported('minute:k').admitted, b.unreported('minute:k').admitted]).toEqual([0, 0]);
    await takeAll(a, 2, 800);
    await a.report();
    expect((await admitted()).used).toBe(13);
    clock.advance(60_000); // the count ends with its window
    expect(await admitted()).toEqual({ used: 0, resetAt: 0 });
  });

  it('starts a new window with nothing unreported: what the ended window admitted ended with it', async () => {
    const { leases, store, clock } = setup();
    const one = leases();
    await takeAll(one, 3, 800); // admitted, never reported
    clock.advance(60_000);
    await takeAll(one, 1, 800);
    expect(one.unreported('minute:k').admitted).toBe(1);
    await one.report();
    expect((await store.read(admittedCount('minute:k'))).used).toBe(1);
  });

  it('keeps the admitted points of a report the store refused, and reports them next time', async () => {
    const { store, clock } = setup();
    let down = true;
    const flaky: CounterStore = {
      ...store,
      take: (key, ...rest) =>
        down && key.startsWith('admitted:') ? Promise.reject(new Error('down')) : store.take(key, ...rest),
    };
    const one = new Leases(flaky, clock.now);
    await takeAll(one, 3, 800);
    await one.report();
    expect(one.unreported('minute:k').admitted).toBe(3);
    down = false;
    await one.report();
    expect((await store.read(admittedCount('minute:k'))).used).toBe(3);
  });
});

/**
 * A shared store with a stand-in for its outages, as store/redis/counters.ts makes one of Redis and memory:
 * both memory counters here, the outage and the return (with its data or without) set by hand.
 */
function standingIn() {
  const { clock } = setup();
  let shared = memoryCounters(clock.now);
  const standIn = memoryCounters(clock.now);
  let out = false;
  let epoch = 0;
  const asked = { shared: 0, standIn: 0 };
  const answering = () => (out ? standIn : shared);
  const store: CounterStore = {
    take: async (...args) => {
      asked[out ? 'standIn' : 'shared']++;
      return { ...(await answering().take(...args)), epoch: out ? fallbackEpoch : epoch };
    },
    giveBack: (...args) => answering().giveBack(...args),
    read: (key) => answering().read(key),
    endsAt: (key) => answering().endsAt(key),
    mark: (key, ms) => answering().mark(key, ms),
    delete: (key) => answering().delete(key),
    sweep: () => answering().sweep(),
    get epoch() {
      return out ? fallbackEpoch : epoch;
    },
  };
  return {
    store,
    asked,
    shared: () => shared,
    leases: () => new Leases(store, clock.now),
    outage: () => {
      out = true;
    },
    back: ({ empty = false } = {}) => {
      out = false;
      if (!empty) return;
      epoch++;
      shared = memoryCounters(clock.now);
    },
  };
}

const admittedOf = async (leases: Leases, n: number, limit: number) =>
  (await Promise.all(Array.from({ length: n }, () => leases.take('minute:k', limit, 60_000)))).filter(
    (t) => t.admitted,
  ).length;

describe('Leases over a store with a stand-in (an outage of the shared store)', () => {
  it('keeps points leased from the shared store through its outage and after it: no quota is lost', async () => {
    const { leases, outage, back, asked, shared } = standingIn();
    const one = leases();
    expect(await admittedOf(one, 1, 80)).toBe(1); // a lease of 10 from the shared store
    outage();
    expect(await admittedOf(one, 5, 80)).toBe(5); // from that lease: nothing asked of the stand-in
    expect(asked.standIn).toBe(0);
    back();
    expect(await admittedOf(one, 100, 80)).toBe(74); // the lease's last 4, then the shared store's rest
    expect((await shared().read('minute:k')).used).toBe(80);
  });

  it('adds what the stand-in admitted to the shared window when it answers again, before leasing more: the window admits its limit once', async () => {
    const { leases, outage, back, shared } = standingIn();
    const one = leases();
    expect(await admittedOf(one, 10, 80)).toBe(10); // the whole first lease
    outage();
    expect(await admittedOf(one, 20, 80)).toBe(20); // from the stand-in's points
    back();
    expect(await admittedOf(one, 100, 80)).toBe(50);
    expect((await shared().read('minute:k')).used).toBe(80);
  });

  it('adds what the stand-in admitted at the next report too, for a key that sends nothing more', async () => {
    const { leases, outage, back, shared } = standingIn();
    const one = leases();
    await admittedOf(one, 10, 80);
    outage();
    await admittedOf(one, 20, 80);
    back();
    await one.report();
    expect((await shared().read('minute:k')).used).toBe(30);
  });

  it('reports admissions to the shared store only: kept while the stand-in answers, all of them after', async () => {
    const { leases, outage, back, shared, store } = standingIn();
    const one = leases();
    await admittedOf(one, 3, 80);
    outage();
    await admittedOf(one, 4, 80);
    await one.report();
    expect(one.unreported('minute:k').admitted).toBe(7);
    expect((await store.read(admittedCount('minute:k'))).used).toBe(0); // nothing went to the stand-in
    back();
    await one.report();
    expect((await shared().read(admittedCount('minute:k'))).used).toBe(7);
  });

  it('drops points of a shared store that came back without its data, and leases anew', async () => {
    const { leases, back, asked, shared } = standingIn();
    const one = leases();
    await admittedOf(one, 1, 80);
    back({ empty: true });
    const before = asked.shared;
    expect(await admittedOf(one, 1, 80)).toBe(1);
    expect(asked.shared).toBe(before + 1);
    expect((await shared().read('minute:k')).used).toBe(10);
  });

  it("gives back on release only points of the shared store, never the stand-in's", async () => {
    const { leases, outage, back, shared } = standingIn();
    const one = leases();
    await admittedOf(one, 10, 80);
    outage();
    await admittedOf(one, 1, 80);
    back();
    await one.release();
    expect((await shared().read('minute:k')).used).toBe(10);
  });
});
