// What usage metering costs a request: the meter's own work, timed in the bench's process (a Map increment
// per request, and one store write per key and day every usageFlushMs). Too small to show as a difference of
// two load runs, so it is set against the full server's CPU per list request instead (report.ts).
import { performance } from 'node:perf_hooks';
import { openSqliteStore, UsageMeter } from '@animal-store/server';
import { pino } from 'pino';

export async function meteringCost(): Promise<{ recordNs: number; flushMs: number }> {
  const memory = openSqliteStore(':memory:');
  const meter = new UsageMeter(memory.store.usage, pino({ level: 'silent' }), {
    retentionDays: 400,
    flushMs: 3_600_000,
  });
  const keys = Array.from({ length: 1_000 }, (_, i) => `key${String(i).padStart(9, '0')}`);
  const record = (n: number) => {
    for (let i = 0; i < n; i++) meter.record(keys[i % keys.length] as string, 'admitted');
  };
  record(100_000); // warm-up
  const calls = 2_000_000;
  const started = performance.now();
  record(calls);
  const recordNs = ((performance.now() - started) * 1e6) / calls;
  const flushStarted = performance.now();
  await meter.flush(); // 1,000 keys' days in one write
  const flushMs = performance.now() - flushStarted;
  await meter.close();
  await memory.store.close();
  return { recordNs, flushMs };
}
