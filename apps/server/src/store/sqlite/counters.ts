// The limiter's counters in the SQLite file (limits/counter-store.ts): one row per window or ban, shared by
// every process on the file and kept across restarts. Each statement is atomic by itself; a call waits for
// another process's write lock on the event loop (failures.ts).
import { type CounterStore, severalHolders } from '../../limits/counter-store.js';
import type { Db } from './database.js';
import { guarded } from './failures.js';

type Take = {
  key: string;
  want: number;
  limit: number;
  now: number;
  windowMs: number;
  holder: string | null;
  holdMs: number;
};

export function sqliteCounters(db: Db, now = () => Date.now()): CounterStore {
  // In DO UPDATE, bare column names are the row before the update: `granted` records what this take got;
  // a lease's grant moves the hold to now + holdMs at least, `held_by` naming its holder while no other
  // holds (a new window forgets the old one's). RETURNING reads the row after: the hold of others.
  const take = db.prepare<Take, { granted: number; used: number; resetAt: number; heldUntil: number }>(
    `INSERT INTO rate_limits (key, points, expire, granted, held_until, held_by)
       VALUES (@key, min(@want, @limit), @now + @windowMs, min(@want, @limit),
               CASE WHEN @holdMs > 0 AND min(@want, @limit) > 0 THEN @now + @holdMs ELSE 0 END,
               CASE WHEN @holdMs > 0 AND min(@want, @limit) > 0 THEN @holder END)
     ON CONFLICT (key) DO UPDATE SET
       granted = CASE WHEN coalesce(expire, 0) <= @now THEN min(@want, @limit)
                      ELSE max(0, min(@want, @limit - points)) END,
       points = CASE WHEN coalesce(expire, 0) <= @now THEN min(@want, @limit)
                     ELSE points + max(0, min(@want, @limit - points)) END,
       held_until = CASE
         WHEN coalesce(expire, 0) <= @now
           THEN CASE WHEN @holdMs > 0 AND min(@want, @limit) > 0 THEN @now + @holdMs ELSE 0 END
         WHEN @holdMs > 0 AND min(@want, @limit - points) > 0 THEN max(held_until, @now + @holdMs)
         ELSE held_until END,
       held_by = CASE
         WHEN coalesce(expire, 0) <= @now
           THEN CASE WHEN @holdMs > 0 AND min(@want, @limit) > 0 THEN @holder END
         WHEN @holdMs > 0 AND min(@want, @limit - points) > 0
           THEN CASE WHEN held_until <= @now OR held_by = @holder THEN @holder ELSE '${severalHolders}' END
         ELSE held_by END,
       expire = CASE WHEN coalesce(expire, 0) <= @now THEN @now + @windowMs ELSE expire END
     RETURNING granted, points AS used, expire AS resetAt,
       CASE WHEN held_until > @now AND held_by IS NOT @holder THEN held_until ELSE 0 END AS heldUntil`,
  );
  // A take of nothing (a look: limits/leases.ts inStore) reads the window and starts none, as on Redis.
  const look = db.prepare<
    { key: string; now: number; holder: string | null },
    { used: number; resetAt: number; heldUntil: number }
  >(
    `SELECT points AS used, expire AS resetAt,
       CASE WHEN held_until > @now AND held_by IS NOT @holder THEN held_until ELSE 0 END AS heldUntil
     FROM rate_limits WHERE key = @key AND expire > @now`,
  );
  const giveBack = db.prepare<{ key: string; points: number; resetAt: number }>(
    'UPDATE rate_limits SET points = max(0, points - @points) WHERE key = @key AND expire = @resetAt',
  );
  // Named: a row `back:<id>` (ending with the window, swept as windows are) records it, and a give-back
  // whose row exists (sent again after a failed or partial answer) changes nothing, as on PostgreSQL and
  // Redis. Both statements in one transaction: a lock wait retries the whole of it.
  const recordBack = db.prepare<{ name: string; resetAt: number }>(
    'INSERT INTO rate_limits (key, points, expire) VALUES (@name, 0, @resetAt) ON CONFLICT (key) DO NOTHING',
  );
  const namedGiveBack = db.transaction((key: string, points: number, resetAt: number, id: string) => {
    if (recordBack.run({ name: `back:${id}`, resetAt }).changes === 1) giveBack.run({ key, points, resetAt });
  });
  const read = db.prepare<[string, number], { points: number; expire: number }>(
    'SELECT points, expire FROM rate_limits WHERE key = ? AND expire > ?',
  );
  const endsAt = db.prepare<[string, number], { expire: number }>(
    'SELECT expire FROM rate_limits WHERE key = ? AND expire > ?',
  );
  const mark = db.prepare<{ key: string; until: number }>(
    `INSERT INTO rate_limits (key, points, expire) VALUES (@key, 1, @until)
     ON CONFLICT (key) DO UPDATE SET points = 1, expire = @until, granted = 0, held_until = 0, held_by = NULL`,
  );
  // The names from `prefix` up to the first name past all of them (its last character the next one): a range
  // of the primary key's index, in SQLite's binary order.
  const listed = db.prepare<[string, string, number], { key: string; expire: number }>(
    'SELECT key, expire FROM rate_limits WHERE key >= ? AND key < ? AND expire > ?',
  );
  const remove = db.prepare<[string]>('DELETE FROM rate_limits WHERE key = ?');
  const sweep = db.prepare<[number]>('DELETE FROM rate_limits WHERE expire <= ?');
  const counters: CounterStore = {
    async take(key, want, limit, windowMs, lease) {
      const holder = lease?.holder ?? null;
      if (want === 0) {
        const at = now();
        const running = look.get({ key, now: at, holder });
        return { granted: 0, ...(running ?? { used: 0, resetAt: at + windowMs, heldUntil: 0 }) };
      }
      return take.get({
        key,
        want,
        limit,
        now: now(),
        windowMs,
        holder,
        holdMs: lease?.holdMs ?? 0,
      }) as Awaited<ReturnType<CounterStore['take']>>;
    },
    async giveBack(key, points, resetAt, id) {
      if (id === undefined) giveBack.run({ key, points, resetAt });
      else namedGiveBack.immediate(key, points, resetAt, id);
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
    async listed(prefix) {
      const past = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
      return new Map(listed.all(prefix, past, now()).map((row) => [row.key, row.expire]));
    },
    enlist: async () => {}, // the rows are the list
    delist: async () => {},
  };
  return guarded(counters, db.name);
}
