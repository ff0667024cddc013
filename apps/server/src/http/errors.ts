// The last two middlewares: a JSON 404 for unknown routes, and the error handler that turns every failure
// into the Error shape. No HTML, no stack trace, no internal detail ever reaches a client.
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { StoreHealth } from '../ops/store-health.js';
import { type StoreUnavailableError, StoreUnwritableError, storeFailure } from '../store/unavailable.js';
import { codeForStatus, HttpError, sendError } from './http-error.js';

type Failure = Error & {
  status?: number;
  type?: string;
  body?: unknown;
  headers?: Record<string, string>;
  errors?: { path: string; message: string }[];
};

const describe = (errors: { path: string; message: string }[]) =>
  errors
    .map(
      (e) =>
        `${e.path
          .replace(/^\//, '')
          .replace(/^params\b/, 'path')
          .replaceAll('/', '.')} ${e.message}`,
    )
    .join('; ');

const isJson = (text: unknown) => {
  try {
    JSON.parse(String(text));
    return true;
  } catch {
    return false;
  }
};

const unwritableMessages = {
  disk_full: "The store's disk is full; nothing was changed. Retry later.",
  read_only: "The store's files cannot be written; nothing was changed. Retry later.",
};

/** The 503 for a store failure: a short wait when it is unreachable or busy, longer when it cannot write. */
export function storeUnavailable(failure: StoreUnavailableError): HttpError {
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

/** The answer to a failure that is not the store's (see storeFailure, checked first by the handler). */
function toHttpError(error: Failure): HttpError {
  if (error instanceof HttpError) return error;
  switch (error.type) {
    case 'entity.parse.failed':
      // body-parser's strict mode refuses valid JSON that is not an object or array (e.g. `null`).
      return new HttpError(
        400,
        isJson(error.body)
          ? 'The request body must be a JSON object.'
          : 'The request body is not valid JSON.',
      );
    case 'body.not.utf8':
      return new HttpError(400, 'The request body is not valid UTF-8.');
    case 'entity.too.large':
      return new HttpError(413, 'The request body exceeds the size limit.', undefined, {
        Connection: 'close',
      });
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new HttpError(415, 'The request body must be application/json in UTF-8.');
  }
  const status = error.status ?? 500;
  if (status >= 500 || !codeForStatus.has(status)) return new HttpError(500, 'An unexpected error occurred.');
  if (!Array.isArray(error.errors)) {
    // Client errors of Express's own layers: a path that is not valid percent-encoding (router), a body
    // that cannot be inflated (body-parser). Their messages describe the request, never the server.
    return new HttpError(status, `The request could not be read: ${error.message}.`);
  }
  // express-openapi-validator's errors: 400 (with the failing fields), 404, 405 (with Allow), 415.
  const messages: Record<number, string> = {
    400: describe(error.errors),
    404: 'No such route.',
    405: 'This path does not support this method.',
    415: 'The request body must be application/json.',
  };
  // HEAD is served wherever GET is (see headAsGet), so it is allowed wherever GET is.
  const allow = error.headers?.Allow?.replace(/\bGET\b/, 'GET, HEAD');
  return new HttpError(status, messages[status] ?? error.message, undefined, allow ? { Allow: allow } : {});
}

export function notFound(req: Request, _res: Response, next: NextFunction) {
  next(new HttpError(404, `No route ${req.method} ${req.baseUrl}${req.path}.`));
}

export function errorHandler(
  logger: Logger,
  storeErrors?: { inc(labels: { reason: string }): void },
  health?: StoreHealth,
) {
  return function answerError(error: Failure, req: Request, res: Response, _next: NextFunction) {
    const store = storeFailure(error);
    const failure = store ? storeUnavailable(store) : toHttpError(error);
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
    sendError(res, failure);
  };
}
