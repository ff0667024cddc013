// The last two middlewares: a JSON 404 for unknown routes, and the error handler that turns every failure
// into the Error shape. No HTML, no stack trace, no internal detail ever reaches a client.
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { codeForStatus, Problem, sendProblem } from './problem.js';

type Failure = Error & {
  status?: number;
  type?: string;
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

function toProblem(error: Failure): Problem {
  if (error instanceof Problem) return error;
  switch (error.type) {
    case 'entity.parse.failed':
      return new Problem(400, 'The request body is not valid JSON.');
    case 'entity.too.large':
      return new Problem(413, 'The request body exceeds the 16 KiB limit.');
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return new Problem(415, 'The request body must be application/json in UTF-8.');
  }
  const status = error.status ?? 500;
  if (status >= 500 || !codeForStatus[status]) return new Problem(500, 'An unexpected error occurred.');
  if (!Array.isArray(error.errors)) {
    // Client errors of Express's own layers: a path that is not valid percent-encoding (router), a body
    // that cannot be inflated (body-parser). Their messages describe the request, never the server.
    return new Problem(status, `The request could not be read: ${error.message}.`);
  }
  // express-openapi-validator's errors: 400 (with the failing fields), 404, 405 (with Allow), 415.
  const messages: Record<number, string> = {
    400: describe(error.errors),
    404: 'No such route.',
    405: 'This path does not support this method.',
    415: 'The request body must be application/json.',
  };
  const allow = error.headers?.Allow;
  return new Problem(status, messages[status] ?? error.message, undefined, allow ? { Allow: allow } : {});
}

export function notFound(req: Request, _res: Response, next: NextFunction) {
  next(new Problem(404, `No route ${req.method} ${req.path}.`));
}

export function errorHandler(logger: Logger) {
  return (error: Failure, req: Request, res: Response, _next: NextFunction) => {
    const problem = toProblem(error);
    if (problem.status >= 500) {
      // The error's name and message only: stack traces stay out of the logs as well as the responses.
      logger.error(
        { reqId: req.id, failure: { type: error.name, message: error.message } },
        'request failed',
      );
    }
    if (res.headersSent) return void res.destroy();
    sendProblem(res, problem);
  };
}
