import type { ErrorCode } from '@animal-store/spec';

/** The rate-limit state the service reported on a response (X-RateLimit-* and Retry-After). */
export type RateLimitState = {
  limit: number;
  remaining: number;
  /** When the described window resets. */
  reset: Date;
  /** Seconds to wait, on a 429. */
  retryAfter?: number;
};

/** A failure answered by the service, with its Error body `{code, message, status}`. */
export class AnimalStoreError extends Error {
  override readonly name = 'AnimalStoreError';
  constructor(
    /** The Error body's code; `unknown` when the response had no Error body. */
    readonly code: ErrorCode | 'unknown',
    message: string,
    readonly status: number,
    /** The X-Request-Id of the failed request: quote it when reporting a problem. */
    readonly requestId: string | undefined,
    readonly rateLimit: RateLimitState | undefined,
  ) {
    super(message);
  }
}

export function rateLimitOf(headers: Headers): RateLimitState | undefined {
  const limit = headers.get('x-ratelimit-limit');
  const remaining = headers.get('x-ratelimit-remaining');
  const reset = headers.get('x-ratelimit-reset');
  if (limit === null || remaining === null || reset === null) return undefined;
  const retryAfter = retryAfterSeconds(headers);
  return {
    limit: Number(limit),
    remaining: Number(remaining),
    reset: new Date(Number(reset) * 1000),
    ...(retryAfter !== undefined && { retryAfter }),
  };
}

/** Retry-After as seconds: delta-seconds (what this service sends) or an HTTP-date. */
export function retryAfterSeconds(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}
