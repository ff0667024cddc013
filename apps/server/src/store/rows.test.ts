// A table's mapping (rows.ts) on a real SQLite database: every kind of column round-trips, a JSON column
// (an array, an object) included, as the "array or object field" recipe (CONTRIBUTING.md) relies on; and a
// JSON column as node-postgres returns it (already parsed) reads the same.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { mapping } from './rows.js';

type Thing = { id: number; name: string; count?: number; tags?: string[]; extra?: { a: number[] } };
const things = mapping<Thing>('things', {
  id: { column: 'id', kind: 'integer' },
  name: { column: 'name', kind: 'text' },
  count: { column: 'count', kind: 'integer' },
  tags: { column: 'tags', kind: 'json' },
  extra: { column: 'extra', kind: 'json' },
});

describe('a mapping of a table', () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT, count INTEGER, tags TEXT, extra TEXT)');
  const insert = db.prepare(things.insert(() => '?'));

  it.each<[string, Omit<Thing, 'id'>]>([
    ['every column', { name: 'a', count: 3, tags: ['x', 'y z'], extra: { a: [1, 2] } }],
    ['an empty array, a quote', { name: 'b"', tags: [] }],
    ['no optional column', { name: 'c' }],
  ])('%s: written and read back as it was sent', (_, thing) => {
    const stored = things.toObject(insert.get(...things.values(thing)) as Record<string, unknown>);
    expect(stored).toEqual({ id: expect.any(Number), ...thing });
    const read = db.prepare(`SELECT ${things.select('t')} FROM things t WHERE id = ?`).get(stored.id);
    expect(things.toObject(read as Record<string, unknown>)).toEqual(stored);
  });

  it('stores a JSON column as JSON text, and reads one a driver already parsed (JSONB) as is', () => {
    expect(things.values({ name: 'd', tags: ['q'] })).toEqual(['d', undefined, '["q"]', undefined]);
    expect(things.toObject({ id: '7', name: 'd', count: '2', tags: ['q'], extra: null })).toEqual({
      id: 7,
      name: 'd',
      count: 2,
      tags: ['q'],
    });
  });
});
