import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { openSqliteStore } from '../store/sqlite/index.js';
import { utcDay } from './days.js';
import { UsageMeter } from './meter.js';

const silent = pino({ level: 'silent' });
const day = (iso: string) => Date.parse(`${iso}T12:00:00Z`);

/** A meter over a real SQLite store in memory, with a clock the test moves; no timer fires by itself. */
function meterAt(start: number, retentionDays = 400) {
  const { store, db } = openSqliteStore(':memory:');
  const clock = { now: start };
  const meter = new UsageMeter(store.usage, silent, { retentionDays, flushMs: 3_600_000 }, () => clock.now);
  const move = (to: number) => {
    clock.now = to;
  };
  return { store, db, meter, move };
}

describe('UsageMeter', () => {
  it('counts in memory per key and UTC day, and writes the sums to the store on flush', async () => {
    const { store, meter, move } = meterAt(day('2026-11-23'));
    for (const outcome of ['admitted', 'admitted', 'limited', 'banned'] as const) meter.record('k1', outcome);
    meter.record('k2', 'admitted');
    move(day('2026-11-24'));
    meter.record('k1', 'admitted');
    expect(await store.usage.days('k1', '2026-11-01', '2026-11-30')).toEqual([]); // nothing written yet
    expect(meter.unwritten('k1', '2026-11-23', '2026-11-23')).toEqual([
      { keyId: 'k1', day: '2026-11-23', admitted: 2, limited: 1, banned: 1 },
    ]);
    await meter.flush();
    expect(meter.unwritten('k1', '2026-11-01', '2026-11-30')).toEqual([]);
    expect(await store.usage.days('k1', '2026-11-01', '2026-11-30')).toEqual([
      { keyId: 'k1', day: '2026-11-23', admitted: 2, limited: 1, banned: 1 },
      { keyId: 'k1', day: '2026-11-24', admitted: 1, limited: 0, banned: 0 },
    ]);
    meter.record('k1', 'admitted');
    await meter.close(); // a graceful stop writes what is left, added to the day
    expect(await store.usage.days('k1', '2026-11-24', '2026-11-24')).toEqual([
      { keyId: 'k1', day: '2026-11-24', admitted: 2, limited: 0, banned: 0 },
    ]);
  });

  it('keeps the counts in memory when the store cannot take them, and writes them at the next flush', async () => {
    const { store, db, meter } = meterAt(day('2026-11-23'));
    meter.record('k1', 'admitted');
    db.pragma('query_only = ON'); // SQLite itself refuses every write now
    await meter.flush();
    meter.record('k1', 'limited');
    expect(meter.unwritten('k1', '2026-11-23', '2026-11-23')).toEqual([
      { keyId: 'k1', day: '2026-11-23', admitted: 1, limited: 1, banned: 0 },
    ]);
    db.pragma('query_only = OFF');
    await meter.flush();
    expect(await store.usage.days('k1', '2026-11-23', '2026-11-23')).toEqual([
      { keyId: 'k1', day: '2026-11-23', admitted: 1, limited: 1, banned: 0 },
    ]);
    await meter.close();
  });

  it('a graceful stop during a write in flight waits for it, then writes what came after', async () => {
    const { store, meter } = meterAt(day('2026-11-23'));
    meter.record('k1', 'admitted');
    const timerWrite = meter.flush(); // in flight when the stop comes
    meter.record('k1', 'limited');
    await meter.close();
    await timerWrite;
    expect(await store.usage.days('k1', '2026-11-23', '2026-11-23')).toEqual([
      { keyId: 'k1', day: '2026-11-23', admitted: 1, limited: 1, banned: 0 },
    ]);
  });

  it('deletes the days older than the retention', async () => {
    const { store, meter, move } = meterAt(day('2026-01-01'), 10);
    meter.record('k1', 'admitted');
    move(day('2026-01-05'));
    meter.record('k1', 'admitted');
    await meter.flush();
    move(day('2026-01-12'));
    await meter.prune();
    expect((await store.usage.days('k1', '2025-12-01', '2026-12-31')).map((d) => d.day)).toEqual([
      '2026-01-05',
    ]);
    await meter.close();
  });

  it('names days in UTC', () => {
    expect(utcDay(Date.parse('2026-11-23T23:59:59.999Z'))).toBe('2026-11-23');
    expect(utcDay(Date.parse('2026-11-24T00:00:00.000+01:00'))).toBe('2026-11-23');
  });
});
