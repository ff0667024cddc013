// What every call of both clients (the API's, index.ts, and the admin API's, admin.ts) shares: its
// signal (the caller's and its timeout), the ConnectionError for what fetch throws, and the ApiError for
// an answer that is not a success.
import { ApiError, ConnectionError, rateLimitOf, retryAfterSeconds } from './errors.js';
import type { ApiError as ErrorBody } from './generated/spec/index.js';

/** Per call: cancel it, or bound how long it may take in all (retries and their waits included). */
export type CallOptions = {
  signal?: AbortSignal;
  /** Milliseconds; past it the call fails with a ConnectionError whose reason is `timeout`. */
  timeout?: number;
};

/**
 * What a failed fetch really ran into, for the message: the innermost cause (`connect ECONNREFUSED
 * 127.0.0.1:3000`, `getaddrinfo ENOTFOUND host`, a TLS error), not undici's bare "fetch failed".
 */
function rootCause(error: unknown): string {
  type Failure = { message?: string; cause?: unknown; errors?: unknown[] };
  let current = error as Failure;
  for (let depth = 0; depth < 5; depth++) {
    const next = current?.cause ?? current?.errors?.[0]; // errors: an AggregateError (several addresses)
    if (next === null || typeof next !== 'object') break;
    current = next as Failure;
  }
  return current?.message || String(error);
}

/** The ApiError of an answer that is not a success, from its Error body (or its status when it has none). */
export function fail(response: Response, body: unknown): never {
  const error = body as Partial<ErrorBody> | undefined;
  const known = typeof error?.code === 'string' && typeof error.message === 'string';
  throw new ApiError({
    code: known ? (error.code as ErrorBody['code']) : 'unknown',
    message: known ? (error.message as string) : `HTTP ${response.status} ${response.statusText}`.trim(),
    status: response.status,
    requestId: response.headers.get('x-request-id') ?? undefined,
    rateLimit: rateLimitOf(response.headers),
    retryAfter: retryAfterSeconds(response.headers),
  });
}

/** The call's signal: the caller's and its timeout, either of which ends it. */
const signalOf = ({ signal, timeout }: CallOptions = {}) => {
  const signals = [signal, timeout === undefined ? undefined : AbortSignal.timeout(timeout)].filter(
    (s): s is AbortSignal => s !== undefined,
  );
  return signals.length === 0 ? undefined : AbortSignal.any(signals);
};

/** Runs one call; what fetch throws becomes a ConnectionError (network, timeout or aborted). */
export async function call<T>(
  options: CallOptions | undefined,
  run: (signal?: AbortSignal) => Promise<T>,
): Promise<T> {
  const signal = signalOf(options);
  try {
    return await run(signal);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    if (signal?.aborted) {
      const timedOut = (signal.reason as Error | undefined)?.name === 'TimeoutError';
      throw new ConnectionError(
        timedOut ? 'timeout' : 'aborted',
        timedOut ? `No answer within ${options?.timeout} ms.` : 'The call was aborted.',
        { cause: error },
      );
    }
    throw new ConnectionError('network', `The service could not be reached: ${rootCause(error)}`, {
      cause: error,
    });
  }
}

/** What an openapi-fetch call answers: its data on a success, else its error body. */
type Answer<T> = { data?: T; error?: unknown; response: Response };

/**
 * One call whose success carries data (most operations): `request` runs with the call's signal, as `call`
 * runs it, and anything but a success is its ApiError.
 */
export function dataOf<T>(
  options: CallOptions | undefined,
  request: (init: { signal?: AbortSignal }) => Promise<Answer<T>>,
): Promise<T> {
  return call(options, async (signal) => {
    const { data, error, response } = await request(signal ? { signal } : {});
    if (data === undefined) fail(response, error);
    return data;
  });
}
