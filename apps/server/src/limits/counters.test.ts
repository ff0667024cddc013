import { tempDatabase } from '@animal-store/test-support';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../store/sqlite/index.js';
import { sqliteCounters, sweepExpired } from './counters.js';

describe('sweepExpired (SQLite)', () => {
  it('deletes the expired counter rows and keeps the live ones', async () => {
    const db = openDatabase(tempDatabase());
    try {
      const counters = sqliteCounters(db);
      await counters('minute', 10, 60).consume('live');
      db.prepare('INSERT INTO rate_limits (key, points, expire) VALUES (?, 1, ?)').run(
        'minute:gone',
        Date.now() - 1,
      );
      expect(sweepExpired(db)).toBe(1);
      const keys = db.prepare('SELECT key FROM rate_limits').all();
      expect(keys).toEqual([{ key: 'minute:live' }]);
      expect((await counters('minute', 10, 60).get('live'))?.consumedPoints).toBe(1);
    } finally {
      db.close();
    }
  });
});
