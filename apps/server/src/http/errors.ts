// The last two middlewares: a JSON 404 for unknown routes, and the error handler that turns every failure
// into the Error shape (store failures here, every other source in error-sources.ts). No HTML, no stack
// trace, no internal detail ever reaches a client.
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { StoreHealth } from '../ops/store-health.js';
import { type StoreUnavailableError, StoreUnwritableError, storeFailure } from '../store/unavailable.js';
import { type Failure, toHttpError } from './error-sources.js';
import { HttpError, sendError } from './http-error.js';

const unwritableMessages = {
  disk_full: "The store's disk is full; nothing was changed. Retry later.",
  read_only: "The store's files cannot be written; nothing was changed. Retry later.",
};

/** Methods that change nothing: a store failure during one changed nothing, whatever its outcome. */
const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The 503 for a store failure: a short wait when it is unreachable or busy, longer when it cannot write.
 * A write whose statement may have been carried out (`method` not safe, the connection lost after it was
 * sent) is told so, not "nothing was changed".
 */
export function storeUnavailable(failure: StoreUnavailableError, method = 'GET'): HttpError {
  if (failure.outcomeUnknown && !safeMethods.has(method)) {
    return new HttpError(
      503,
      'The store did not confirm this change: it may have been made. Check before sending it again, or send it again with the same Idempotency-Key, which answers with what was made.',
      'write_unconfirmed',
      { 'Retry-After': '5' },
    );
  }
  if (failure instanceof StoreUnwritableError) {
    return new HttpError(503, unwritableMessages[failure.reason], 'service_unavailable', {
      'Retry-After': '30',
    });
  }
  return new HttpError(
    503,
    'The store is unavailable for now; nothing was changed. Retry later.',
    'service_unavailable',
    {
      'Retry-After': '5',
    },
  );
}

/**
 * The JSON 404. A path outside the API's base path (a base URL without `/v1` or `/admin/v1`, the usual
 * slip) is told where the API is and what the request would have been there.
 */
export function notFound(basePath: string) {
  return function notFound(req: Request, _res: Response, next: NextFunction) {
    const path = `${req.baseUrl}${req.path}`;
    const outside = path !== basePath && !path.startsWith(`${basePath}/`);
    const hint = outside ? ` The API is under ${basePath}: ${req.method} ${basePath}${path}.` : '';
    next(new HttpError(404, `No route ${req.method} ${path}.${hint}`));
  };
}

/**
 * The 5xx bodies judged against the contract's Error schema before they are sent: express-openapi-validator
 * validates 2xx-4xx bodies only. A body that breaks it is reported (as every contract violation is) and
 * replaced by the generic 500, the one answer whose shape is known good.
 */
export type ServerErrorCheck = (req: Request) => (body: unknown) => void;

export function errorHandler(
  logger: Logger,
  storeErrors?: { inc(labels: { reason: string }): void },
  health?: StoreHealth,
  checkServerError?: ServerErrorCheck,
) {
  return function errorHandler(error: Failure, req: Request, res: Response, _next: NextFunction) {
    const store = storeFailure(error);
    const failure = store ? storeUnavailable(store, req.method) : toHttpError(error);
    if (store instanceof StoreUnwritableError) {
      storeErrors?.inc({ reason: store.reason });
      health?.failedWrite(store.reason, store.message); // logged once per episode, not per request
    } else if (store) {
      storeErrors?.inc({ reason: 'unavailable' });
      logger.warn(
        { reqId: req.id, failure: { type: error.name, message: error.message } },
        'store unavailable',
      );
    } else if (failure.status >= 500) {
      // The error's name and message only: stack traces stay out of the logs as well as the responses.
      logger.error(
        { reqId: req.id, failure: { type: error.name, message: error.message } },
        'request failed',
      );
    }
    if (res.headersSent) return void res.destroy();
    if (failure.status >= 500 && checkServerError) {
      try {
        checkServerError(req)(failure.body);
      } catch (violation) {
        return sendError(res, toHttpError(violation as Failure));
      }
    }
    sendError(res, failure);
  };
}
