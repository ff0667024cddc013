// A failure answered on purpose, and the one way the Error body `{code, message, status}` is written.
// Which code goes with which status is the contract's table (Error.code's x-status-of-code).
import { type ErrorCode, errorCodes, errorStatuses, requestBodyLimit } from '@animal-store/spec';
import type { Response } from 'express';

/** The first code the contract lists for each status (e.g. 429 → rate_limited). */
export const codeForStatus: ReadonlyMap<number, ErrorCode> = new Map(
  [...errorCodes].reverse().map((code) => [errorStatuses[code], code]),
);

export class HttpError extends Error {
  override readonly name = 'HttpError';
  readonly code: ErrorCode;
  constructor(
    readonly status: number,
    message: string,
    code?: ErrorCode,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.code = code ?? codeForStatus.get(status) ?? 'internal_error';
  }

  get body() {
    return { code: this.code, message: this.message, status: this.status };
  }
}

/** Headers a file being sent may have set before it failed (res.sendFile): they describe the file, not the error. */
const fileHeaders = [
  'Content-Type',
  'ETag',
  'Last-Modified',
  'Accept-Ranges',
  'Content-Range',
  'Cache-Control',
];

export function sendError(res: Response, error: HttpError): void {
  res.locals.errorCode = error.body.code;
  for (const name of fileHeaders) res.removeHeader(name);
  res.set(res.locals.everyAnswer ?? {}); // the API's own (every-answer.ts)
  res.set(error.headers);
  res.status(error.status).json(error.body);
}

/** Milliseconds as the whole delta-seconds of Retry-After and `RateLimit`'s `t` (at least 1). */
export const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** A 429 that says its wait in the text and in Retry-After, the same whole seconds in both. */
function tooMany(code: ErrorCode, waitMs: number, text: (wait: number) => string): HttpError {
  const wait = seconds(waitMs);
  return new HttpError(429, text(wait), code, { 'Retry-After': String(wait) });
}

/**
 * The answers more than one place gives, written once (the catalogue): each layer that meets the
 * condition builds its answer here, so one condition has one text wherever it is found.
 */
export const answers = {
  /** A body over the contract's limit, known from Content-Length or met while reading: not read further. */
  bodyTooLarge: (limitBytes: number = requestBodyLimit) =>
    new HttpError(413, `The request body exceeds the ${limitBytes / 1024} KiB limit.`, undefined, {
      Connection: 'close',
    }),
  /** A body that is not JSON in UTF-8. */
  notJson: () => new HttpError(415, 'The request body must be application/json in UTF-8.'),
  /** An Idempotency-Key sent again with another body (both APIs' creates). */
  idempotencyKeyReused: () =>
    new HttpError(
      422,
      'This Idempotency-Key was used with a different request body.',
      'idempotency_key_reused',
    ),
  /**
   * A create whose Idempotency-Key another request holds (or took over): retry in a second, when its
   * answer will be replayed.
   */
  idempotencyInProgress: () =>
    new HttpError(
      409,
      'A request with this Idempotency-Key is still being processed; retry later.',
      'idempotency_in_progress',
      { 'Retry-After': '1' },
    ),
  /**
   * Past a rate limit (`limit` names it: the public API's per key or address, the admin API's per token):
   * retry after `waitMs`, the time until a request would be admitted.
   */
  rateLimited: (waitMs: number, limit = 'Rate limit') =>
    tooMany('rate_limited', waitMs, (wait) => `${limit} exceeded; retry in ${wait} seconds.`),
  /** A key banned for sending while rate limited: retry after `waitMs`. */
  temporarilyBanned: (waitMs: number) =>
    tooMany(
      'temporarily_banned',
      waitMs,
      (wait) =>
        `This API key is temporarily banned for sending requests while rate limited; retry in ${wait} seconds.`,
    ),
  /** The process is draining (SIGTERM): readiness fails, so that a load balancer stops sending. */
  shuttingDown: () =>
    new HttpError(
      503,
      'The service is shutting down; send requests to another instance.',
      'service_unavailable',
      { 'Retry-After': '5' },
    ),
  /**
   * A connection past its address's share of the connection slots (server.ts, connection-slots.ts): a
   * request on it is answered so, never reset, so that its client knows nothing was done (nginx's
   * limit_conn answers 503 too).
   */
  tooManyConnections: () =>
    new HttpError(
      503,
      'Too many connections from this address; retry in a second, or on a connection already open.',
      'service_unavailable',
      { 'Retry-After': '1' },
    ),
  /** What Node's HTTP parser refuses (answered by server.ts on the socket, before any app sees it). */
  unparsable: () => new HttpError(400, 'The request could not be parsed as HTTP/1.1.'),
  requestTimeout: () => new HttpError(408, 'The request did not arrive in time.'),
  headersTooLarge: (maxLines: number) =>
    new HttpError(431, `The request header section is too large (at most 16 KiB and ${maxLines} lines).`),
  methodNotImplemented: () => new HttpError(501, 'This method is not implemented.'),
  /** Anything unexpected: a generic message; the request id finds it in the logs. */
  unexpected: () => new HttpError(500, 'An unexpected error occurred.'),
};
