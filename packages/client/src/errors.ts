import type { ErrorCode } from './generated/spec/index.js';

/** The rate-limit state the service reported on a response (X-RateLimit-* and Retry-After). */
export type RateLimitState = {
  limit: number;
  remaining: number;
  /** When the described window resets. */
  reset: Date;
  /** Seconds to wait, on a 429. */
  retryAfter?: number;
};

/** What an ApiError is made of: the Error body and what the response's headers said. */
export type ApiErrorOptions = {
  /** The Error body's code; `unknown` when the response had no Error body. */
  code: ErrorCode | 'unknown';
  message: string;
  status: number;
  /** The X-Request-Id of the failed request. */
  requestId?: string | undefined;
  rateLimit?: RateLimitState | undefined;
  /** Seconds to wait before retrying (Retry-After). */
  retryAfter?: number | undefined;
};

/** A failure answered by the service, with its Error body `{code, message, status}` (the contract's Error). */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** The Error body's code; `unknown` when the response had no Error body. */
  readonly code: ErrorCode | 'unknown';
  readonly status: number;
  /** The X-Request-Id of the failed request: quote it when reporting a problem. */
  readonly requestId: string | undefined;
  readonly rateLimit: RateLimitState | undefined;
  /** Seconds to wait before retrying, on a 429 or 503 (the response's Retry-After). */
  readonly retryAfter: number | undefined;

  constructor(options: ApiErrorOptions);
  /** @deprecated Since 1.2.0: pass one ApiErrorOptions object. */
  constructor(
    code: ErrorCode | 'unknown',
    message: string,
    status: number,
    requestId: string | undefined,
    rateLimit: RateLimitState | undefined,
    retryAfter?: number,
  );
  constructor(
    first: ApiErrorOptions | ErrorCode | 'unknown',
    message?: string,
    status?: number,
    requestId?: string,
    rateLimit?: RateLimitState,
    retryAfter?: number,
  ) {
    const options: ApiErrorOptions =
      typeof first === 'object'
        ? first
        : { code: first, message: message ?? '', status: status ?? 0, requestId, rateLimit, retryAfter };
    super(options.message);
    this.code = options.code;
    this.status = options.status;
    this.requestId = options.requestId;
    this.rateLimit = options.rateLimit;
    this.retryAfter = options.retryAfter;
  }
}

/** @deprecated Since 1.1.0: renamed {@link ApiError} (the contract's name for the Error body). */
export const AnimalStoreError = ApiError;
/** @deprecated Since 1.1.0: renamed {@link ApiError}. */
export type AnimalStoreError = ApiError;

/** The service could not be reached or did not answer in time: no Error body exists. */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError';
  constructor(
    /** `network`: no connection or it broke; `timeout`: the call's timeout passed; `aborted`: its signal. */
    readonly reason: 'network' | 'timeout' | 'aborted',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
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
