// Each engine's counters (store/*/counters.ts) against the real engine of this project, and the lease
// algorithm over them: partial grants at the limit, windows that end (short windows, real time), points
// given back, marks (bans) and their list, reads and sweeps. The same operations, the same answers, on
// SQLite, PostgreSQL and Redis.
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { CounterStore } from '../../src/limits/counter-store.js';
import { Leases } from '../../src/limits/leases.js';
import { type Backend, openBackend } from '../../src/store/open.js';
import { backend as engine, freshStore } from '../support/harness.js';

let opened: Backend;
let counters: CounterStore;
beforeAll(async () => {
  const config = loadConfig({ ...(await freshStore()), NODE_ENV: 'test' });
  opened = await openBackend(config.database, config.redis, pino({ level: 'silent' }));
  counters = opened.counters;
});
afterAll(() => opened.close());

const window = 400; // ms: short windows, so that they really end during the test

/**
 * A take, with how long its answer took. A window's end as Redis reports it (a TTL, turned into an instant
 * when the answer arrives) is off by at most the time the answer took, plus the millisecond PTTL rounds to.
 */
async function take(key: string, want: number, limit: number, windowMs: number) {
  const started = performance.now();
  const grant = await counters.take(key, want, limit, windowMs);
  return { ...grant, latency: performance.now() - started };
}

/**
 * Until the store says the window or mark `key` has ended (endsAt 0), rather than a sleep past its end: a
 * loaded machine may answer later, never sooner.
 */
const ended = (key: string) =>
  expect.poll(() => counters.endsAt(key), { timeout: 10_000, interval: 20 }).toBe(0);

/** A running window as read: its points exactly; its end within what the two answers' times allow. */
async function expectRunning(key: string, used: number, grant: { resetAt: number; latency: number }) {
  const started = performance.now();
  const seen = await counters.read(key);
  const latency = performance.now() - started;
  expect(seen.used, key).toBe(used);
  expect(Math.abs(seen.resetAt - grant.resetAt), key).toBeLessThanOrEqual(1 + grant.latency + latency);
}

describe(`counters on ${engine}`, () => {
  it('grants what is asked while the window has it, then the rest, then nothing', async () => {
    // A window that outlasts the three takes: a rehearsal under load saw the file's first takes on
    // PostgreSQL outlast a 400-ms one, and the third began a new window.
    const minute = 60_000;
    expect(await counters.take('minute:a', 5, 8, minute)).toMatchObject({ granted: 5, used: 5 });
    expect(await counters.take('minute:a', 5, 8, minute)).toMatchObject({ granted: 3, used: 8 });
    const none = await counters.take('minute:a', 5, 8, minute);
    expect(none).toMatchObject({ granted: 0, used: 8 });
    expect(none.resetAt - Date.now()).toBeGreaterThan(0);
    expect(none.resetAt - Date.now()).toBeLessThanOrEqual(minute);
  });

  it('starts a new window once the last one has ended', async () => {
    await counters.take('minute:b', 8, 8, window);
    await ended('minute:b');
    expect(await counters.take('minute:b', 2, 8, window)).toMatchObject({ granted: 2, used: 2 });
  });

  it('takes back points given back while their window runs', async () => {
    const grant = await counters.take('minute:c', 6, 6, 60_000);
    await counters.giveBack('minute:c', 4, grant.resetAt);
    expect(await counters.take('minute:c', 10, 6, 60_000)).toMatchObject({ granted: 4, used: 6 });
  });

  it('counts a named give-back once, however often it is sent (a retry after a lost or partial answer)', async () => {
    const grant = await counters.take('minute:named', 6, 6, 60_000);
    await counters.giveBack('minute:named', 4, grant.resetAt, 'back-1');
    await counters.giveBack('minute:named', 4, grant.resetAt, 'back-1');
    await Promise.all([1, 2, 3].map(() => counters.giveBack('minute:named', 1, grant.resetAt, 'back-2')));
    expect(await counters.read('minute:named')).toMatchObject({ used: 1 });
    expect(await counters.take('minute:named', 10, 6, 60_000)).toMatchObject({ granted: 5, used: 6 });
  });

  it('a look (a take of nothing) grants nothing and starts no window', async () => {
    expect(await counters.take('minute:look', 0, 8, 60_000)).toMatchObject({ granted: 0, used: 0 });
    expect(await counters.read('minute:look')).toEqual({ used: 0, resetAt: 0 });
    await counters.take('minute:look', 3, 8, 60_000);
    expect(await counters.take('minute:look', 0, 8, 60_000)).toMatchObject({ granted: 0, used: 3 });
    expect(await counters.read('minute:look')).toMatchObject({ used: 3 });
  });

  it('a named take is undone once: carried out, its points go back; arriving after its undo, it counts nothing', async (context) => {
    const undo = counters.undo?.bind(counters);
    if (!undo) return context.skip(); // only a store whose answers can be lost (Redis) names its takes
    const named = (id: string) => ({ holder: 'this', holdMs: 0, id });
    await counters.take('minute:undo', 2, 8, 60_000);
    expect(await counters.take('minute:undo', 3, 8, 60_000, named('t1'))).toMatchObject({
      granted: 3,
      used: 5,
    });
    await undo('minute:undo', 't1');
    await undo('minute:undo', 't1');
    expect(await counters.read('minute:undo')).toMatchObject({ used: 2 });
    // Undone before it arrives, in a running window and in one not started: nothing granted, nothing counted.
    await undo('minute:undo', 't2');
    expect(await counters.take('minute:undo', 3, 8, 60_000, named('t2'))).toMatchObject({
      granted: 0,
      used: 2,
    });
    expect(await counters.read('minute:undo')).toMatchObject({ used: 2 });
    await undo('minute:undo-new', 't3');
    expect(await counters.take('minute:undo-new', 3, 8, 60_000, named('t3'))).toMatchObject({ granted: 0 });
    expect(await counters.read('minute:undo-new')).toEqual({ used: 0, resetAt: 0 });
  });

  it('a take that names the window it saw: Redis answers that end unread, unless the window was ended and started again meanwhile or a hold could reach it', async () => {
    const first = await counters.take('minute:seen', 1, 100, 60_000);
    // An end the store cannot have: Redis, which would pay a command to read the true one, answers it
    // (the taker's own); SQLite and PostgreSQL read the end in the same statement, and answer the truth.
    const claimed = first.resetAt + 5_000;
    const seen = (used: number) => ({ holder: 'this', holdMs: 0, seen: { resetAt: claimed, used } });
    const second = await counters.take('minute:seen', 1, 100, 60_000, seen(first.used));
    expect(second).toMatchObject({ granted: 1, used: 2 });
    if (engine === 'postgres+redis') expect(second.resetAt).toBe(claimed);
    else expect(Math.abs(second.resetAt - first.resetAt)).toBeLessThan(50);
    // An operator ends the window, another process starts the next one: its count is below what this
    // taker saw, so the end is read, on every engine.
    await counters.delete('minute:seen');
    await sleep(20);
    const other = await counters.take('minute:seen', 1, 100, 60_000);
    const third = await counters.take('minute:seen', 1, 100, 60_000, seen(second.used));
    expect(third).toMatchObject({ granted: 1, used: 2 });
    expect(Math.abs(third.resetAt - other.resetAt)).toBeLessThan(50);
    // Ended, and this taker the first in the next window: the window is new, its end read (and set).
    await counters.delete('minute:seen');
    const fourth = await counters.take('minute:seen', 1, 100, 60_000, seen(0));
    expect(fourth).toMatchObject({ granted: 1, used: 1 });
    expect(fourth.resetAt).not.toBe(claimed);
    expect((await counters.read('minute:seen')).resetAt).toBeGreaterThan(Date.now() + 50_000);
    // A lease (points held, not used at once) is answered the end it saw while its hold ends a second
    // before it at least; one whose hold could reach it reads the end, so that the hold ends with the
    // window (the seen end is later than the real one by the takes' latencies).
    const lease = (holdMs: number) =>
      counters.take('minute:seen', 5, 100, 60_000, {
        holder: 'this',
        holdMs,
        seen: { resetAt: claimed, used: 1 },
      });
    const short = await lease(1_000);
    expect(short).toMatchObject({ granted: 5, used: 6 });
    if (engine === 'postgres+redis') expect(short.resetAt).toBe(claimed);
    else expect(Math.abs(short.resetAt - fourth.resetAt)).toBeLessThan(50);
    const long = await lease(claimed - Date.now() - 500);
    expect(long).toMatchObject({ granted: 5, used: 11 });
    expect(Math.abs(long.resetAt - fourth.resetAt)).toBeLessThan(50);
  });

  it('keeps a mark (a ban) until it ends or is deleted', async () => {
    expect(await counters.endsAt('ban:d')).toBe(0);
    await counters.mark('ban:d', 60_000);
    expect((await counters.endsAt('ban:d')) - Date.now()).toBeGreaterThan(59_000);
    await counters.delete('ban:d');
    expect(await counters.endsAt('ban:d')).toBe(0);
    await counters.mark('ban:e', 200);
    await ended('ban:e');
  });

  it('lists the running bans in one call, each with its end, until it ends or is taken off the list', async () => {
    const at = Date.now();
    // A ban as bans.ts starts one: its ban of record (a window of one point), then on the list.
    const ban = async (name: string, ms: number) => {
      await counters.take(name, 1, 1, ms);
      await counters.enlist('ban:', name, Date.now() + ms);
    };
    await ban('ban:listed-long', 60_000);
    await ban('ban:listed-short', 300);
    await counters.take('minute:listed-long', 1, 5, 60_000); // a window: not a ban, never listed
    const listed = await counters.listed('ban:');
    expect(listed.get('ban:listed-long')).toBeGreaterThanOrEqual(at + 60_000);
    expect(listed.get('ban:listed-long')).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(listed.has('ban:listed-short')).toBe(true);
    expect([...listed.keys()].filter((name) => !name.startsWith('ban:'))).toEqual([]);
    await ended('ban:listed-short');
    // Ended, and off the list then too: the list's end is the one its writer set after the ban's record
    // (Date.now() + ms, a take later), so on a loaded machine it may outlive the record by that take.
    const listedShort = async () => (await counters.listed('ban:')).has('ban:listed-short');
    await expect.poll(listedShort, { timeout: 1_000, interval: 20 }).toBe(false);
    // An unban, as bans.ts makes one: off the list, then the ban of record deleted.
    await counters.delist('ban:', 'ban:listed-long');
    await counters.delete('ban:listed-long');
    expect((await counters.listed('ban:')).has('ban:listed-long')).toBe(false);
  });

  it('a second ban of a key whose first ban ended replaces it: it lasts its full length', async () => {
    await counters.mark('ban:g', 200);
    await ended('ban:g');
    await counters.mark('ban:g', 60_000);
    expect((await counters.endsAt('ban:g')) - Date.now()).toBeGreaterThan(59_000);
    // and a ban over a live one, or over a window of the same name, is the new one
    await counters.mark('ban:g', 120_000);
    expect((await counters.endsAt('ban:g')) - Date.now()).toBeGreaterThan(119_000);
    await counters.take('ban:h', 3, 10, 60_000);
    await counters.mark('ban:h', 90_000);
    expect((await counters.endsAt('ban:h')) - Date.now()).toBeGreaterThan(89_000);
  });

  it('points given back for a window that has ended never go to the next one', async () => {
    const first = await counters.take('minute:i', 5, 10, window);
    await ended('minute:i');
    const second = await take('minute:i', 6, 10, 60_000);
    expect(second).toMatchObject({ granted: 6, used: 6 });
    expect(second.resetAt).toBeGreaterThan(first.resetAt);
    await counters.giveBack('minute:i', 5, first.resetAt); // late: its window is gone
    await expectRunning('minute:i', 6, second);
  });

  it('points given back for a window that was deleted (an operator started it over, Redis flushed) never go to the one started after it', async () => {
    const first = await counters.take('minute:deleted', 5, 10, 60_000);
    await counters.delete('minute:deleted');
    // The window started after it: its end is later than the first one's (by a minute here).
    const second = await take('minute:deleted', 6, 10, 120_000);
    expect(second).toMatchObject({ granted: 6, used: 6 });
    await counters.giveBack('minute:deleted', 5, first.resetAt, 'back-deleted');
    await counters.giveBack('minute:deleted', 3, first.resetAt);
    await expectRunning('minute:deleted', 6, second);
    // Its own points still go back to it, named or not.
    await counters.giveBack('minute:deleted', 2, second.resetAt, 'back-second');
    await counters.giveBack('minute:deleted', 1, second.resetAt);
    await expectRunning('minute:deleted', 3, second);
  });

  it('read: the points taken from a running window and its end; nothing for an ended or unknown one', async () => {
    const grant = await take('minute:j', 4, 10, 60_000);
    await expectRunning('minute:j', 4, grant);
    await counters.take('minute:k', 4, 10, 200);
    await ended('minute:k');
    expect(await counters.read('minute:k')).toEqual({ used: 0, resetAt: 0 });
    expect(await counters.read('minute:never')).toEqual({ used: 0, resetAt: 0 });
  });

  it('sweep deletes what has ended and keeps every running window and mark, exactly', async () => {
    const live = await take('day:l', 7, 100, 60_000);
    await counters.mark('ban:l', 60_000);
    await counters.take('minute:m', 3, 100, 200);
    await counters.mark('ban:m', 200);
    await Promise.all([ended('minute:m'), ended('ban:m')]);
    const swept = await counters.sweep();
    // SQL engines delete the two ended rows (and any other test's ended ones); Redis expires its own keys.
    if (engine === 'postgres+redis') expect(swept).toBeGreaterThanOrEqual(0);
    else expect(swept).toBeGreaterThanOrEqual(2);
    await expectRunning('day:l', 7, live);
    expect((await counters.endsAt('ban:l')) - Date.now()).toBeGreaterThan(59_000);
    expect(await counters.read('minute:m')).toEqual({ used: 0, resetAt: 0 });
    expect(await counters.endsAt('ban:m')).toBe(0);
    // the live window goes on counting from where it was
    expect(await counters.take('day:l', 1, 100, 60_000)).toMatchObject({ granted: 1, used: 8 });
  });

  it("holds: a lease's grant marks the window held for its holdMs, seen by every other holder, not by its own", async () => {
    // Holds of 2 s: a loaded machine took over 300 ms between a grant and the next take (the hold had ended).
    const a = { holder: 'process-a', holdMs: 2_000 };
    const b = { holder: 'process-b', holdMs: 2_000 };
    const leased = await counters.take('minute:n', 5, 8, 60_000, a);
    expect(leased).toMatchObject({ granted: 5, heldUntil: 0 }); // its own hold
    const refused = await counters.take('minute:n', 5, 8, 60_000, b); // the rest, then nothing
    expect(refused).toMatchObject({ granted: 3 });
    const nothing = await take('minute:n', 1, 8, 60_000);
    expect(nothing.granted).toBe(0);
    expect(nothing.heldUntil - Date.now()).toBeGreaterThan(0);
    expect(nothing.heldUntil - Date.now()).toBeLessThanOrEqual(2_000 + nothing.latency + 1);
    // Both hold now: each sees the other's; a take of a single point (no hold) moves nothing.
    expect((await counters.take('minute:n', 1, 8, 60_000, { ...a, holdMs: 0 })).heldUntil).toBeGreaterThan(0);
    // The hold ends (b is told of none: its own is never reported to it).
    await expect
      .poll(async () => (await counters.take('minute:n', 1, 8, 60_000, b)).heldUntil, {
        timeout: 10_000,
        interval: 250,
      })
      .toBe(0);
    // A window that ended forgets its hold.
    await counters.take('minute:o', 5, 8, 200, a);
    await ended('minute:o');
    expect(await counters.take('minute:o', 1, 8, 60_000, b)).toMatchObject({ granted: 1, heldUntil: 0 });
  });

  it("holds of different lengths: a short lease's grant never shortens a long lease's hold, its own or another's", async () => {
    const long = { holder: 'process-a', holdMs: 3_000 };
    const short = { holder: 'process-b', holdMs: 200 };
    await counters.take('minute:p', 3, 8, 60_000, long);
    await counters.take('minute:p', 3, 8, 60_000, short);
    await counters.take('minute:p', 1, 8, 60_000, { ...long, holdMs: 200 }); // its own, shorter
    await sleep(400); // both short holds have ended; the long one runs
    const nothing = await take('minute:p', 5, 8, 60_000);
    expect(nothing.granted).toBe(1);
    expect(nothing.heldUntil - Date.now()).toBeGreaterThan(2_000);
    expect(nothing.heldUntil - Date.now()).toBeLessThanOrEqual(3_000);
  });

  it.runIf(engine === 'postgres+redis')(
    'undo: a named take carried out is undone once (its points back), and one undone before it arrives grants nothing',
    async () => {
      const lease = (id: string) => ({ holder: 'process-a', holdMs: 0, id });
      const undo = counters.undo as NonNullable<CounterStore['undo']>;
      expect(await counters.take('day:p', 40, 1_000, 60_000, lease('first'))).toMatchObject({ granted: 40 });
      await undo('day:p', 'first');
      await undo('day:p', 'first'); // again (a retry): counted once
      expect((await counters.read('day:p')).used).toBe(0);
      await undo('day:p', 'late'); // its answer was given up on before it was even carried out
      expect(await counters.take('day:p', 40, 1_000, 60_000, lease('late'))).toMatchObject({ granted: 0 });
      expect((await counters.read('day:p')).used).toBe(0);
    },
  );

  it("a hold never outlasts its window: the next window's first holder is told of no other's", async () => {
    const a = { holder: 'a', holdMs: 10_000 };
    const b = { holder: 'b', holdMs: 0 };
    const second = 1_000; // a window long enough for b's two takes on a busy machine
    await counters.take('minute:hold-ends', 2, 4, second, a); // a's hold would run 10 s: past the window's end
    await ended('minute:hold-ends');
    await counters.take('minute:hold-ends', 1, 4, second, b); // the next window, started by b
    const last = await counters.take('minute:hold-ends', 3, 4, second, b); // used up: the hold is read
    expect(last).toMatchObject({ granted: 3, used: 4, heldUntil: 0 });
  });

  it('a window that ends while leases are out: the lease dies with it, the next window starts afresh', async () => {
    const [one, two] = [new Leases(counters, Date.now), new Leases(counters, Date.now)];
    // A window long enough to still run when it is read back on a loaded machine (four takes of 400-ms
    // windows under load outlasted theirs: the read found the next window's 2 points).
    const first = 1_500;
    const take = (leases: Leases) => leases.take('minute:f', 80, first);
    // Each: a point, then a lease (an eighth of what is left), most of it unused.
    expect((await Promise.all([take(one), take(one), take(two), take(two)])).every((t) => t.admitted)).toBe(
      true,
    );
    expect((await counters.take('minute:f', 0, 80, first)).used).toBeGreaterThan(4);
    await ended('minute:f');
    // The next window a minute long, so that it still runs when it is read below on a loaded machine (a
    // take of 300 ms under load left 88 ms of a 400-ms one); it starts with the take, not before it.
    const asked = Date.now();
    const after = await one.take('minute:f', 80, 60_000);
    expect(after).toMatchObject({ admitted: true, remaining: 79 });
    expect(after.resetAt).toBeGreaterThanOrEqual(asked + 60_000 - 5); // an engine's end may round by a few ms
    // The store counts the new window only: this process's new point, nothing of the old leases.
    expect((await counters.take('minute:f', 0, 80, 60_000)).used).toBe(1);
    await Promise.all([one.release(), two.release()]);
  });
});
