// Deprecated operations, driven by the contract (x-deprecated-at, x-sunset, x-replacement-target): every
// response announces the deprecation (RFC 9745), the sunset (RFC 8594) and the exact successor request;
// from the sunset instant on, by the real clock, the operation answers 410. The operation is the one
// resolved at the head of the chain (res.locals.operation: matched on the path's text, parameters not
// decoded, so that announcing never fails a request before it is authenticated and counted).
import { deprecatedOperations } from '@animal-store/spec';
import type { NextFunction, Request, Response } from 'express';
import { HttpError } from '../http/http-error.js';

/**
 * What each deprecated operation answers, worked out once (this runs on every request of the operation): its
 * header values, and its replacement's target cut at its `{name}` placeholders (odd pieces name a path
 * parameter), so that a successor is joined, not matched.
 */
const byOperationId = new Map(
  deprecatedOperations.map((op) => {
    const sunset = Date.parse(op.sunset);
    const pieces = op.replacement.target.split(/\{(\w+)\}/);
    return [
      op.operationId as string,
      {
        sunset,
        sunsetHeader: new Date(sunset).toUTCString(),
        deprecation: `@${Math.floor(Date.parse(op.deprecatedAt) / 1000)}`,
        /** The replacement request with this request's path parameters filled in (e.g. /pets?id=42). */
        successor(params: Record<string, string>) {
          let target = '';
          for (let i = 0; i < pieces.length; i++) {
            const piece = pieces[i] as string;
            target += i % 2 === 1 ? (params[piece] ?? '') : piece;
          }
          return target;
        },
        removed: `${op.method} ${op.path} was removed on ${op.sunset.slice(0, 10)}`,
      },
    ] as const;
  }),
);

/** The request's operation (resolved at the head of the chain) when it is deprecated. */
const deprecated = (res: Response) => {
  const operation = res.locals.operation;
  const op = operation && byOperationId.get(operation.id);
  return op && { op, params: operation.params };
};

/** Sets the deprecation headers on every response of a deprecated operation, errors included. */
export function announceDeprecations(req: Request, res: Response, next: NextFunction) {
  const found = deprecated(res);
  if (found) {
    // Node's setHeader: Express's res.set would look at each name again for a content type.
    res.setHeader('Deprecation', found.op.deprecation);
    res.setHeader('Sunset', found.op.sunsetHeader);
    res.setHeader('Link', `<${req.baseUrl}${found.op.successor(found.params)}>; rel="successor-version"`);
  }
  next();
}

/** From the sunset on, a removed operation answers 410, naming its replacement. */
export function enforceSunsets(_req: Request, res: Response, next: NextFunction) {
  const found = deprecated(res);
  if (!found || Date.now() < found.op.sunset) return next();
  const successor = found.op.successor(found.params);
  next(new HttpError(410, `${found.op.removed}; use GET ${successor} instead.`, 'gone'));
}
