// Rate limiting by plan, on rate-limiter-flexible. The algorithm (fixed windows that start at a subject's
// first request) and the atomic SQLite upsert are the library's; what is written here is the order of
// consumption across two windows, the temporary ban, and the shape of the answer.
import { RateLimiterRes, RateLimiterSQLite } from 'rate-limiter-flexible';
import type { Db } from '../store/database.js';
import { type WindowName, windows } from './plans.js';

export type WindowState = {
  name: WindowName;
  limit: number;
  remaining: number;
  /** Milliseconds until the window resets (a full window when it has not started). */
  resetMs: number;
};

export type Decision =
  | { allowed: true; windows: WindowState[] }
  | {
      allowed: false;
      code: 'rate_limited' | 'temporarily_banned';
      retryAfterMs: number;
      windows: WindowState[];
    };

export type Subject =
  | { kind: 'key'; id: string; perMinute: number; perDay: number }
  | { kind: 'address'; address: string };

/** The seam between the HTTP layer and a store: SQLite here; a Redis-backed one can implement it too. */
export interface RateLimiter {
  consume(subject: Subject): Promise<Decision>;
}

export type BanPolicy = { threshold: number; seconds: number };
export type LimiterOptions = { ban: BanPolicy; anonymousPerMinute: number };

const table = 'rate_limits';

/**
 * The connection handed to rate-limiter-flexible. Its better-sqlite3 store prepares its SQL on every call
 * (measured: about a tenth of the server's CPU under load); this adapter hands it cached statements.
 * Everything else, the transaction around each consume included, stays the library's.
 */
function withCachedStatements(db: Db) {
  const statements = new Map<string, ReturnType<Db['prepare']>>();
  return {
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = db.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
    transaction: <T extends (...args: never[]) => unknown>(fn: T) => db.transaction(fn),
  };
}

export function createSqliteRateLimiter(db: Db, options: LimiterOptions): RateLimiter {
  const client = withCachedStatements(db);
  const instances = new Map<string, RateLimiterSQLite>();
  // One library instance per (counter, quota); counters are keyed by prefix + subject, not by quota.
  const limiter = (prefix: string, points: number, duration: number) => {
    const id = `${prefix}/${points}/${duration}`;
    let instance = instances.get(id);
    if (!instance) {
      instance = new RateLimiterSQLite({
        storeClient: client,
        storeType: 'better-sqlite3',
        tableName: table,
        tableCreated: true, // created by our migrations; the library's own creation is asynchronous
        keyPrefix: prefix,
        points,
        duration,
      });
      instances.set(id, instance);
    }
    return instance;
  };
  const violations = limiter('violations', options.ban.threshold, windows.minute);
  const bans = limiter('ban', 1, options.ban.seconds);
  // Fast path only: the ban of record is the database row, shared by every process and kept on restart.
  const bannedUntil = new Map<string, number>();
  const sweep = setInterval(() => {
    db.prepare(`DELETE FROM ${table} WHERE expire < ?`).run(Date.now());
    for (const [id, until] of bannedUntil) if (until <= Date.now()) bannedUntil.delete(id);
  }, 3_600_000);
  sweep.unref(); // housekeeping only: never keeps the process alive

  const state = (name: WindowName, limit: number, res: RateLimiterRes | null): WindowState => ({
    name,
    limit,
    remaining: res ? res.remainingPoints : limit,
    resetMs: res && res.msBeforeNext >= 0 ? res.msBeforeNext : windows[name] * 1000,
  });
  const rejected = (error: unknown): RateLimiterRes => {
    if (error instanceof RateLimiterRes) return error;
    throw error; // a store failure, not a limit
  };

  async function banned(id: string): Promise<number> {
    const until = bannedUntil.get(id);
    if (until !== undefined && until > Date.now()) return until - Date.now();
    const ban = await bans.get(id);
    if (ban && ban.consumedPoints > 1 && ban.msBeforeNext > 0) {
      bannedUntil.set(id, Date.now() + ban.msBeforeNext);
      return ban.msBeforeNext;
    }
    return 0;
  }

  /** Counts a 429 against the key; past the threshold within a minute, bans it. Returns the ban length. */
  async function violation(id: string): Promise<number> {
    try {
      await violations.consume(id);
      return 0;
    } catch (error) {
      rejected(error);
      await bans.block(id, options.ban.seconds);
      await violations.delete(id); // after the ban, the key starts with a clean record
      bannedUntil.set(id, Date.now() + options.ban.seconds * 1000);
      return options.ban.seconds * 1000;
    }
  }

  async function consumeKey(subject: Extract<Subject, { kind: 'key' }>): Promise<Decision> {
    const minute = limiter('minute', subject.perMinute, windows.minute);
    const day = limiter('day', subject.perDay, windows.day);
    const both = async (m: RateLimiterRes | null, d: RateLimiterRes | null) => [
      state('minute', subject.perMinute, m ?? (await minute.get(subject.id))),
      state('day', subject.perDay, d ?? (await day.get(subject.id))),
    ];
    const banMs = await banned(subject.id);
    if (banMs > 0) {
      return {
        allowed: false,
        code: 'temporarily_banned',
        retryAfterMs: banMs,
        windows: await both(null, null),
      };
    }
    // Minute first, and the day only when the minute admitted: a minute rejection must not burn day quota.
    let minuteRes: RateLimiterRes;
    try {
      minuteRes = await minute.consume(subject.id);
    } catch (error) {
      const res = rejected(error);
      return limited(subject.id, res.msBeforeNext, await both(res, null));
    }
    try {
      const dayRes = await day.consume(subject.id);
      return { allowed: true, windows: await both(minuteRes, dayRes) };
    } catch (error) {
      const res = rejected(error);
      const refunded = await minute.reward(subject.id); // the request did not count after all
      return limited(subject.id, res.msBeforeNext, await both(refunded, res));
    }
  }

  async function limited(id: string, retryAfterMs: number, states: WindowState[]): Promise<Decision> {
    const banMs = await violation(id);
    return banMs > 0
      ? { allowed: false, code: 'temporarily_banned', retryAfterMs: banMs, windows: states }
      : { allowed: false, code: 'rate_limited', retryAfterMs, windows: states };
  }

  async function consumeAddress(address: string): Promise<Decision> {
    const minute = limiter('address', options.anonymousPerMinute, windows.minute);
    try {
      const res = await minute.consume(address);
      return { allowed: true, windows: [state('minute', options.anonymousPerMinute, res)] };
    } catch (error) {
      const res = rejected(error);
      return {
        allowed: false,
        code: 'rate_limited',
        retryAfterMs: res.msBeforeNext,
        windows: [state('minute', options.anonymousPerMinute, res)],
      };
    }
  }

  return {
    consume: (subject) => (subject.kind === 'key' ? consumeKey(subject) : consumeAddress(subject.address)),
  };
}
