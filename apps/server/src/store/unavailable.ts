/**
 * The store cannot answer right now (unreachable, restarting, busy): the request changed nothing and may
 * be retried. The HTTP layer answers 503 `service_unavailable` with Retry-After.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}

export type UnwritableReason = 'disk_full' | 'read_only';

/**
 * The store can be read but cannot take writes: its disk is full, or its files cannot be written
 * (read-only, I/O errors). Nothing was changed; it lasts until an operator frees space or fixes the files.
 */
export class StoreUnwritableError extends StoreUnavailableError {
  override name = 'StoreUnwritableError';
  constructor(
    readonly reason: UnwritableReason,
    message: string,
  ) {
    super(message);
  }
}

/** SQLite's "try again" answers, when another process holds the write lock past the busy timeout. */
const busy = /^SQLITE_(BUSY|LOCKED)/;
const full = /^SQLITE_FULL/;
const unwritable = /^SQLITE_(READONLY|IOERR|CANTOPEN)/;

/**
 * The store error behind any failure of a store call, or undefined when it is not one (a bug: a 500).
 * SQLite's errors arrive raw from better-sqlite3 and from the rate limiter's own statements, so they are
 * recognised here by their codes; PostgreSQL's are translated where they are raised (store/postgres).
 */
export function storeFailure(error: unknown): StoreUnavailableError | undefined {
  if (error instanceof StoreUnavailableError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  const message = (error as Error).message;
  if (full.test(code)) return new StoreUnwritableError('disk_full', `the store's disk is full: ${message}`);
  if (unwritable.test(code)) {
    return new StoreUnwritableError('read_only', `the store's files cannot be written: ${message}`);
  }
  if (busy.test(code)) return new StoreUnavailableError(`the store is busy: ${message}`);
  return undefined;
}
