// The limiter's counters in PostgreSQL (limits/counter-store.ts): one row per window or ban, shared by
// every instance. Each operation is one statement; a take serialises on the window's row.
import { type CounterStore, severalHolders } from '../../limits/counter-store.js';
import type { Pg } from './database.js';

export function postgresCounters({ query }: Pg, now = () => Date.now()): CounterStore {
  return {
    async take(key, want, limit, windowMs, lease) {
      if (want === 0) {
        // A take of nothing (a look: limits/leases.ts inStore) reads the window and starts none, as on Redis.
        const at = now();
        const [running] = await query<{ used: string; reset_at: string; held_until: string }>(
          `SELECT points AS used, expire AS reset_at,
             CASE WHEN held_until > $2 AND held_by IS DISTINCT FROM $3::text THEN held_until ELSE 0 END AS held_until
           FROM rate_limits WHERE key = $1 AND expire > $2`,
          [key, at, lease?.holder ?? null],
        );
        if (!running) return { granted: 0, used: 0, resetAt: at + windowMs, heldUntil: 0 };
        return {
          granted: 0,
          used: Number(running.used),
          resetAt: Number(running.reset_at),
          heldUntil: Number(running.held_until),
        };
      }
      // In DO UPDATE, r.* is the row before the update: `granted` records what this take got; a lease's
      // grant moves the hold to now + holdMs at least, `held_by` naming its holder while no other holds (a
      // new window forgets the old one's). RETURNING reads the row after: the hold of others.
      const [row] = await query<{ granted: string; used: string; reset_at: string; held_until: string }>(
        `INSERT INTO rate_limits AS r (key, points, expire, granted, held_until, held_by)
           VALUES ($1, LEAST($2::bigint, $3::bigint), $4::bigint + $5::bigint, LEAST($2::bigint, $3::bigint),
                   CASE WHEN $7::bigint > 0 AND LEAST($2::bigint, $3::bigint) > 0 THEN $4::bigint + $7::bigint ELSE 0 END,
                   CASE WHEN $7::bigint > 0 AND LEAST($2::bigint, $3::bigint) > 0 THEN $6::text END)
         ON CONFLICT (key) DO UPDATE SET
           granted = CASE WHEN COALESCE(r.expire, 0) <= $4 THEN LEAST($2::bigint, $3::bigint)
                          ELSE GREATEST(0, LEAST($2::bigint, $3::bigint - r.points)) END,
           points = CASE WHEN COALESCE(r.expire, 0) <= $4 THEN LEAST($2::bigint, $3::bigint)
                         ELSE r.points + GREATEST(0, LEAST($2::bigint, $3::bigint - r.points)) END,
           held_until = CASE
             WHEN COALESCE(r.expire, 0) <= $4
               THEN CASE WHEN $7::bigint > 0 AND LEAST($2::bigint, $3::bigint) > 0 THEN $4::bigint + $7::bigint ELSE 0 END
             WHEN $7::bigint > 0 AND LEAST($2::bigint, $3::bigint - r.points) > 0
               THEN GREATEST(r.held_until, $4::bigint + $7::bigint)
             ELSE r.held_until END,
           held_by = CASE
             WHEN COALESCE(r.expire, 0) <= $4
               THEN CASE WHEN $7::bigint > 0 AND LEAST($2::bigint, $3::bigint) > 0 THEN $6::text END
             WHEN $7::bigint > 0 AND LEAST($2::bigint, $3::bigint - r.points) > 0
               THEN CASE WHEN r.held_until <= $4 OR r.held_by = $6::text THEN $6::text ELSE '${severalHolders}' END
             ELSE r.held_by END,
           expire = CASE WHEN COALESCE(r.expire, 0) <= $4 THEN $4::bigint + $5::bigint ELSE r.expire END
         RETURNING granted, points AS used, expire AS reset_at,
           CASE WHEN held_until > $4 AND held_by IS DISTINCT FROM $6::text THEN held_until ELSE 0 END AS held_until`,
        [key, want, limit, now(), windowMs, lease?.holder ?? null, lease?.holdMs ?? 0],
      );
      const taken = row as { granted: string; used: string; reset_at: string; held_until: string };
      return {
        granted: Number(taken.granted),
        used: Number(taken.used),
        resetAt: Number(taken.reset_at),
        heldUntil: Number(taken.held_until),
      };
    },
    async giveBack(key, points, resetAt, id) {
      if (id === undefined) {
        await query(
          'UPDATE rate_limits SET points = GREATEST(0, points - $2) WHERE key = $1 AND expire = $3',
          [key, points, resetAt],
        );
        return;
      }
      // Named: a row `back:<id>` (ending with the window, swept as windows are) records it, and a give-back
      // whose row exists (a retry after a lost answer) changes nothing.
      await query(
        `WITH named AS (
           INSERT INTO rate_limits (key, points, expire) VALUES ($4, 0, $3) ON CONFLICT (key) DO NOTHING RETURNING key
         )
         UPDATE rate_limits SET points = GREATEST(0, points - $2)
         WHERE key = $1 AND expire = $3 AND EXISTS (SELECT 1 FROM named)`,
        [key, points, resetAt, `back:${id}`],
      );
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
         ON CONFLICT (key) DO UPDATE SET points = 1, expire = $2, granted = 0, held_until = 0, held_by = NULL`,
        [key, now() + ms],
      );
    },
    async delete(key) {
      await query('DELETE FROM rate_limits WHERE key = $1', [key]);
    },
    async listed(prefix) {
      // The prefix written into the statement, not bound: so the planner can use the partial index of the
      // names that start with it (migrations.ts, rate_limits_bans), whatever the database's collation.
      if (!/^[a-z-]+:$/.test(prefix)) throw new Error(`listed: not a name prefix: ${prefix}`);
      const rows = await query<{ key: string; expire: string }>(
        `SELECT key, expire FROM rate_limits WHERE key LIKE '${prefix}%' AND expire > $1`,
        [now()],
      );
      return new Map(rows.map((row) => [row.key, Number(row.expire)]));
    },
    enlist: async () => {}, // the rows are the list
    delist: async () => {},
    async sweep() {
      return (await query('DELETE FROM rate_limits WHERE expire <= $1 RETURNING key', [now()])).length;
    },
  };
}
