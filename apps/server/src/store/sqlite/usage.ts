// Usage per key and UTC day on SQLite: counts added by one upsert per key and day, in one transaction.

import type { KeyDayCounts, UsageStore } from '../operator-records.js';
import { toKeyDayCounts, type UsageRow } from '../rows.js';
import type { Db } from './database.js';

export function createSqliteUsageStore(db: Db): UsageStore {
  const add = db.prepare<KeyDayCounts>(
    `INSERT INTO key_usage (key_id, day, admitted, limited, banned) VALUES (@keyId, @day, @admitted, @limited, @banned)
       ON CONFLICT (key_id, day) DO UPDATE SET admitted = admitted + excluded.admitted,
         limited = limited + excluded.limited, banned = banned + excluded.banned`,
  );
  const days = db.prepare<[string, string, string], UsageRow>(
    'SELECT * FROM key_usage WHERE key_id = ? AND day BETWEEN ? AND ? ORDER BY day',
  );
  const prune = db.prepare<[string]>('DELETE FROM key_usage WHERE day < ?');
  const addAll = db.transaction((counts: KeyDayCounts[]) => {
    for (const count of counts) add.run(count);
  });
  return {
    async add(counts) {
      addAll.immediate(counts);
    },
    async days(keyId, from, to) {
      return days.all(keyId, from, to).map(toKeyDayCounts);
    },
    async prune(before) {
      return prune.run(before).changes;
    },
  };
}
