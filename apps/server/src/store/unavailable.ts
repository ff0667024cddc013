/**
 * The store cannot answer right now (unreachable, restarting, busy): the request changed nothing and may
 * be retried. The HTTP layer answers 503 `service_unavailable` with Retry-After. `outcomeUnknown`: the
 * connection was lost after a statement was sent, so the store may have carried it out (an autocommit
 * INSERT committed before the answer was lost): a write is then answered `write_unconfirmed`, never
 * "nothing was changed".
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
  constructor(
    message: string,
    readonly outcomeUnknown = false,
  ) {
    super(message);
  }
}

/**
 * A create under an Idempotency-Key whose claim another request took over (this one was presumed dead):
 * nothing was committed; the other request's pet is the key's.
 */
export class IdempotencyClaimLostError extends Error {
  override name = 'IdempotencyClaimLostError';
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

/**
 * The store error behind any failure of a store call, or undefined when it is not one (a bug: a 500). Each
 * engine turns its own failures into these errors where it raises them (store/sqlite/failures.ts,
 * store/postgres), so a store failure is recognised by its class alone.
 */
export function storeFailure(error: unknown): StoreUnavailableError | undefined {
  return error instanceof StoreUnavailableError ? error : undefined;
}
