// A key's search text on SQLite: written with the key, filled at the next start for a key an older release
// wrote without one, and such a key found meanwhile as before (a rolling upgrade's older instance).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { quotaFor } from '../../plans.js';
import { openSqliteStore } from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'search-text-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('api_keys.search_text on SQLite', () => {
  it('is written with a key, found meanwhile by lower() when an older release left it empty, and filled at the next start', async () => {
    const path = join(dir, 'keys.db');
    const first = openSqliteStore(path);
    const written = await first.store.keys.create({
      plan: 'free',
      quota: quotaFor('free'),
      label: 'MÜNCHEN Acme',
    });
    const older = await first.store.keys.create({
      plan: 'free',
      quota: quotaFor('free'),
      label: 'MÜNCHEN Older',
    });
    first.db.prepare('UPDATE api_keys SET search_text = NULL WHERE id = ?').run(older.id);
    const search = async (store: typeof first.store, q: string) =>
      (await store.keys.page({ search: q, limit: 10, order: 'oldest' })).map((k) => k.id);
    expect(await search(first.store, 'münchen')).toEqual([written.id]); // SQLite's lower() folds no Ü
    expect(await search(first.store, 'older')).toEqual([older.id]); // found as before, ASCII folded
    first.db.close();
    const next = openSqliteStore(path);
    try {
      expect(await search(next.store, 'münchen')).toEqual([written.id, older.id]);
      expect(next.db.prepare('SELECT count(*) AS n FROM api_keys WHERE search_text IS NULL').get()).toEqual({
        n: 0,
      });
    } finally {
      next.db.close();
    }
  });
});
