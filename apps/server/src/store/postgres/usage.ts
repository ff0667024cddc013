// Usage per key and UTC day on PostgreSQL: every key's day added by one upsert statement.

import type { UsageStore } from '../operator-records.js';
import { toKeyDayCounts, type UsageRow } from '../rows.js';
import type { Pg } from './database.js';

export function createPostgresUsageStore({ query }: Pg): UsageStore {
  return {
    async add(counts) {
      if (counts.length === 0) return;
      await query(
        `INSERT INTO key_usage (key_id, day, admitted, limited, banned)
           SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[])
         ON CONFLICT (key_id, day) DO UPDATE SET admitted = key_usage.admitted + EXCLUDED.admitted,
           limited = key_usage.limited + EXCLUDED.limited, banned = key_usage.banned + EXCLUDED.banned`,
        [
          counts.map((c) => c.keyId),
          counts.map((c) => c.day),
          counts.map((c) => c.admitted),
          counts.map((c) => c.limited),
          counts.map((c) => c.banned),
        ],
      );
    },
    async days(keyId, from, to) {
      const rows = await query<UsageRow>(
        'SELECT * FROM key_usage WHERE key_id = $1 AND day BETWEEN $2 AND $3 ORDER BY day',
        [keyId, from, to],
      );
      return rows.map(toKeyDayCounts);
    },
    async prune(before) {
      return (await query('DELETE FROM key_usage WHERE day < $1 RETURNING 1', [before])).length;
    },
  };
}
