/**
 * The store cannot answer right now (unreachable, restarting, busy): the request changed nothing and may
 * be retried. The HTTP layer answers 503 `service_unavailable` with Retry-After.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}
