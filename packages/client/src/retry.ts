// Retries with exponential backoff and full jitter, never sooner than Retry-After, bounded by attempts,
// by the longest single wait (maxRetryDelayMs) and by the total wait. What is retried:
// - 429, for every request (nothing was done);
// - network errors and 502/503/504, for GET, and for POST only when it carries an Idempotency-Key (the
//   service then replays instead of creating twice).
// It lives in the `fetch` given to openapi-fetch, because a Request cannot be re-sent from its middleware:
// each attempt sends a fresh copy. Written by hand: docs/decisions.md#client-retries.

export type RetryReason = 'rate_limited' | 'unavailable' | 'network';
export type RetryEvent = { attempt: number; delayMs: number; reason: RetryReason };

export type RetryOptions = {
  /** Attempts in all, the first included (default 4; 1 disables retries). */
  maxAttempts: number;
  /** Longest total time spent waiting between attempts, in ms (default 60 s). */
  maxTotalWaitMs: number;
  /**
   * Longest single wait, in ms (default 10 s): when Retry-After asks for more, the call fails at once with
   * the 429 (its `retryAfter` says how long) instead of blocking.
   */
  maxRetryDelayMs: number;
  /** First backoff ceiling, doubled on each attempt (default 500 ms)... */
  baseDelayMs: number;
  /** ...up to this ceiling (default 30 s). */
  maxDelayMs: number;
  /** Source of jitter in [0, 1) (default Math.random). */
  random: () => number;
  /** How to wait (default setTimeout, cut short by the call's signal); tests pass a fake clock. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Called before each retry. */
  onRetry?: (event: RetryEvent) => void;
};

const abortableSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

export const defaultRetry: RetryOptions = {
  maxAttempts: 4,
  maxTotalWaitMs: 60_000,
  maxRetryDelayMs: 10_000,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  random: Math.random,
  sleep: abortableSleep,
};

/** Full jitter: a uniform wait between 0 and the exponential ceiling of this attempt. */
export const backoff = (attempt: number, o: RetryOptions) =>
  Math.floor(o.random() * Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** (attempt - 1)));

/** Whether a failure of this request may be retried without doing its work twice. */
const safeToRepeat = (request: Request) => request.method === 'GET' || request.headers.has('idempotency-key');

export function retryingFetch(
  send: (request: Request) => Promise<Response>,
  options: RetryOptions,
  retryAfterMs: (response: Response) => number,
): (request: Request) => Promise<Response> {
  return async (request) => {
    let waited = 0;
    for (let attempt = 1; ; attempt++) {
      let response: Response | undefined;
      let failure: unknown;
      try {
        // A fresh copy per attempt, given the request's signal again: a bare clone follows it only through
        // a weak reference that a garbage collection cuts, and the call's timeout or abort would then
        // never reach the attempt in flight (nodejs/undici#4068).
        response = await send(new Request(request.clone(), { signal: request.signal }));
      } catch (error) {
        if (request.signal.aborted) throw error; // the caller's abort or timeout: never retried
        failure = error;
      }
      const reason: RetryReason | undefined =
        response === undefined
          ? 'network'
          : response.status === 429
            ? 'rate_limited'
            : [502, 503, 504].includes(response.status)
              ? 'unavailable'
              : undefined;
      const give = () => {
        if (response) return response;
        throw failure;
      };
      if (reason === undefined || attempt >= options.maxAttempts) return give();
      if (reason !== 'rate_limited' && !safeToRepeat(request)) return give();
      const floor = response ? retryAfterMs(response) : 0;
      const delay = Math.max(floor, backoff(attempt, options));
      // A long Retry-After (a ban, a spent day) or a wait past the budget is not waited out.
      if (floor > options.maxRetryDelayMs || waited + delay > options.maxTotalWaitMs) return give();
      await response?.body?.cancel();
      options.onRetry?.({ attempt, delayMs: delay, reason });
      await options.sleep(delay, request.signal);
      waited += delay;
    }
  };
}
