// Retries for 429 (and, for GET only, network errors): exponential backoff with full jitter, never sooner
// than Retry-After, bounded by attempts and total wait. It lives in the `fetch` given to openapi-fetch,
// because a Request cannot be re-sent from its middleware: each attempt sends a fresh clone.
// Written by hand (about thirty lines): the retry libraries we looked at (p-retry, exponential-backoff)
// neither take a server's Retry-After as the floor of a wait nor budget the total time waited.

export type RetryOptions = {
  /** Attempts in all, the first included (default 4; 1 disables retries). */
  maxAttempts: number;
  /** Longest total time spent waiting between attempts, in ms (default 60 s). */
  maxTotalWaitMs: number;
  /** First backoff ceiling, doubled on each attempt (default 500 ms)... */
  baseDelayMs: number;
  /** ...up to this ceiling (default 30 s). */
  maxDelayMs: number;
  /** Source of jitter in [0, 1) (default Math.random). */
  random: () => number;
  /** How to wait (default setTimeout); tests pass a fake clock. */
  sleep: (ms: number) => Promise<void>;
};

export const defaultRetry: RetryOptions = {
  maxAttempts: 4,
  maxTotalWaitMs: 60_000,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  random: Math.random,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Full jitter: a uniform wait between 0 and the exponential ceiling of this attempt. */
export const backoff = (attempt: number, o: RetryOptions) =>
  Math.floor(o.random() * Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** (attempt - 1)));

export function retryingFetch(
  send: (request: Request) => Promise<Response>,
  options: RetryOptions,
  retryAfterMs: (response: Response) => number,
): (request: Request) => Promise<Response> {
  return async (request) => {
    let waited = 0;
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        response = await send(request.clone());
      } catch (error) {
        // Network errors are retried for GET only: a POST may have been applied.
        const delay = backoff(attempt, options);
        if (
          request.method !== 'GET' ||
          attempt >= options.maxAttempts ||
          waited + delay > options.maxTotalWaitMs
        ) {
          throw error;
        }
        await options.sleep(delay);
        waited += delay;
        continue;
      }
      if (response.status !== 429 || attempt >= options.maxAttempts) return response;
      const delay = Math.max(retryAfterMs(response), backoff(attempt, options));
      // A long ban (or any wait past the budget) is not waited out: the caller gets the 429.
      if (waited + delay > options.maxTotalWaitMs) return response;
      await response.body?.cancel();
      await options.sleep(delay);
      waited += delay;
    }
  };
}
