import { tempDatabase } from '@animal-store/test-support';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError, StoreUnwritableError } from '../unavailable.js';
import { sqliteCall, translate } from './failures.js';

const sqliteError = (code: string) => Object.assign(new Error(`raw ${code}`), { code });

describe('translate', () => {
  it.each([
    ['SQLITE_FULL', StoreUnwritableError, 'disk_full'],
    ['SQLITE_READONLY', StoreUnwritableError, 'read_only'],
    ['SQLITE_READONLY_DBMOVED', StoreUnwritableError, 'read_only'],
    ['SQLITE_IOERR_WRITE', StoreUnwritableError, 'read_only'],
    ['SQLITE_CANTOPEN', StoreUnwritableError, 'read_only'],
    ['SQLITE_BUSY', StoreUnavailableError, undefined],
    ['SQLITE_LOCKED', StoreUnavailableError, undefined],
  ])('%s becomes the store error for it', (code, type, reason) => {
    const translated = translate(sqliteError(code), ':memory:');
    expect(translated).toBeInstanceOf(type);
    expect((translated as StoreUnwritableError).reason).toBe(reason);
    expect((translated as Error).message).toContain(`raw ${code}`);
  });

  it('leaves everything else alone (a bug, answered 500)', () => {
    const bug = sqliteError('SQLITE_CONSTRAINT_UNIQUE');
    expect(translate(bug, ':memory:')).toBe(bug);
    const plain = new TypeError('x');
    expect(translate(plain, ':memory:')).toBe(plain);
  });
});

/** A WAL database whose write lock `holder` holds, and a second connection with a 10 ms busy timeout. */
function locked() {
  const path = tempDatabase();
  const holder = new Database(path);
  holder.pragma('journal_mode = WAL');
  holder.exec('CREATE TABLE t (x); BEGIN IMMEDIATE');
  return { path, holder, writer: new Database(path, { timeout: 10 }) };
}

describe('sqliteCall', () => {
  it('waits for another connection to let go of the write lock, without blocking the event loop', async () => {
    const { path, holder, writer } = locked();
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    setTimeout(() => holder.exec('COMMIT'), 200);
    try {
      await sqliteCall(() => writer.prepare('INSERT INTO t VALUES (1)').run(), path);
    } finally {
      clearInterval(ticker);
    }
    // Timers ran while the write waited (a write that blocked the event loop for its wait lets none run:
    // the interval is cleared before it could fire). Not how many: a busy machine runs few of them.
    expect(ticks).toBeGreaterThan(0);
    expect(writer.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 1 });
  });

  it('gives up after its wait as the store being busy', async () => {
    const { path, holder, writer } = locked();
    await expect(sqliteCall(() => writer.exec('INSERT INTO t VALUES (1)'), path, 100)).rejects.toThrow(
      StoreUnavailableError,
    );
    holder.exec('ROLLBACK');
  });
});
