// The limiter's counters in the SQLite file (limits/counter-store.ts): one row per window or ban, shared by
// every process on the file and kept across restarts. Each statement is atomic by itself; a call waits for
// another process's write lock on the event loop (failures.ts).
import type { CounterStore } from '../../limits/counter-store.js';
import type { Db } from './database.js';
import { guarded } from './failures.js';

type Take = { key: string; want: number; limit: number; now: number; windowMs: number };

export function sqliteCounters(db: Db, now = () => Date.now()): CounterStore {
  // In DO UPDATE, bare column names are the row before the update: `granted` records what this take got.
  const take = db.prepare<Take, { granted: number; used: number; resetAt: number }>(
    `INSERT INTO rate_limits (key, points, expire, granted)
       VALUES (@key, min(@want, @limit), @now + @windowMs, min(@want, @limit))
     ON CONFLICT (key) DO UPDATE SET
       granted = CASE WHEN coalesce(expire, 0) <= @now THEN min(@want, @limit)
                      ELSE max(0, min(@want, @limit - points)) END,
       points = CASE WHEN coalesce(expire, 0) <= @now THEN min(@want, @limit)
                     ELSE points + max(0, min(@want, @limit - points)) END,
       expire = CASE WHEN coalesce(expire, 0) <= @now THEN @now + @windowMs ELSE expire END
     RETURNING granted, points AS used, expire AS resetAt`,
  );
  const giveBack = db.prepare<{ key: string; points: number; resetAt: number }>(
    'UPDATE rate_limits SET points = max(0, points - @points) WHERE key = @key AND expire = @resetAt',
  );
  const read = db.prepare<[string, number], { points: number; expire: number }>(
    'SELECT points, expire FROM rate_limits WHERE key = ? AND expire > ?',
  );
  const endsAt = db.prepare<[string, number], { expire: number }>(
    'SELECT expire FROM rate_limits WHERE key = ? AND expire > ?',
  );
  const mark = db.prepare<{ key: string; until: number }>(
    `INSERT INTO rate_limits (key, points, expire) VALUES (@key, 1, @until)
     ON CONFLICT (key) DO UPDATE SET points = 1, expire = @until, granted = 0`,
  );
  const remove = db.prepare<[string]>('DELETE FROM rate_limits WHERE key = ?');
  const sweep = db.prepare<[number]>('DELETE FROM rate_limits WHERE expire <= ?');
  const counters: CounterStore = {
    async take(key, want, limit, windowMs) {
      return take.get({ key, want, limit, now: now(), windowMs }) as Awaited<
        ReturnType<CounterStore['take']>
      >;
    },
    async giveBack(key, points, resetAt) {
      giveBack.run({ key, points, resetAt });
    },
    async read(key) {
      const row = read.get(key, now());
      return row ? { used: row.points, resetAt: row.expire } : { used: 0, resetAt: 0 };
    },
    async endsAt(key) {
      return endsAt.get(key, now())?.expire ?? 0;
    },
    async mark(key, ms) {
      mark.run({ key, until: now() + ms });
    },
    async delete(key) {
      remove.run(key);
    },
    async sweep() {
      return sweep.run(now()).changes;
    },
  };
  return guarded(counters, db.name);
}
