// The limiter's counters in PostgreSQL (limits/counter-store.ts): one row per window or ban, shared by
// every instance. Each operation is one statement; a take serialises on the window's row.
import type { CounterStore } from '../../limits/counter-store.js';
import type { Pg } from './database.js';

export function postgresCounters({ query }: Pg, now = () => Date.now()): CounterStore {
  return {
    async take(key, want, limit, windowMs) {
      // In DO UPDATE, r.* is the row before the update: `granted` records what this take got.
      const [row] = await query<{ granted: string; used: string; reset_at: string }>(
        `INSERT INTO rate_limits AS r (key, points, expire, granted)
           VALUES ($1, LEAST($2::bigint, $3::bigint), $4::bigint + $5::bigint, LEAST($2::bigint, $3::bigint))
         ON CONFLICT (key) DO UPDATE SET
           granted = CASE WHEN COALESCE(r.expire, 0) <= $4 THEN LEAST($2::bigint, $3::bigint)
                          ELSE GREATEST(0, LEAST($2::bigint, $3::bigint - r.points)) END,
           points = CASE WHEN COALESCE(r.expire, 0) <= $4 THEN LEAST($2::bigint, $3::bigint)
                         ELSE r.points + GREATEST(0, LEAST($2::bigint, $3::bigint - r.points)) END,
           expire = CASE WHEN COALESCE(r.expire, 0) <= $4 THEN $4::bigint + $5::bigint ELSE r.expire END
         RETURNING granted, points AS used, expire AS reset_at`,
        [key, want, limit, now(), windowMs],
      );
      const taken = row as { granted: string; used: string; reset_at: string };
      return { granted: Number(taken.granted), used: Number(taken.used), resetAt: Number(taken.reset_at) };
    },
    async giveBack(key, points, resetAt) {
      await query('UPDATE rate_limits SET points = GREATEST(0, points - $2) WHERE key = $1 AND expire = $3', [
        key,
        points,
        resetAt,
      ]);
    },
    async read(key) {
      const [row] = await query<{ points: string; expire: string }>(
        'SELECT points, expire FROM rate_limits WHERE key = $1 AND expire > $2',
        [key, now()],
      );
      return row ? { used: Number(row.points), resetAt: Number(row.expire) } : { used: 0, resetAt: 0 };
    },
    async endsAt(key) {
      const [row] = await query<{ expire: string }>(
        'SELECT expire FROM rate_limits WHERE key = $1 AND expire > $2',
        [key, now()],
      );
      return row ? Number(row.expire) : 0;
    },
    async mark(key, ms) {
      await query(
        `INSERT INTO rate_limits (key, points, expire) VALUES ($1, 1, $2)
         ON CONFLICT (key) DO UPDATE SET points = 1, expire = $2, granted = 0`,
        [key, now() + ms],
      );
    },
    async delete(key) {
      await query('DELETE FROM rate_limits WHERE key = $1', [key]);
    },
    async sweep() {
      return (await query('DELETE FROM rate_limits WHERE expire <= $1 RETURNING key', [now()])).length;
    },
  };
}
