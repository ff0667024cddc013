// Deprecated operations, driven by the contract (x-deprecated-at, x-sunset, x-replacement-target): every
// response announces the deprecation (RFC 9745), the sunset (RFC 8594) and the exact successor request;
// from the sunset instant on, by the real clock, the operation answers 410. The operation is the one
// resolved at the head of the chain (res.locals.operation: matched on the path's text, parameters not
// decoded, so that announcing never fails a request before it is authenticated and counted).
import { deprecatedOperations } from '@animal-store/spec';
import type { NextFunction, Request, Response } from 'express';
import { HttpError } from '../http/http-error.js';

const byOperationId = new Map(
  deprecatedOperations.map((op) => [
    op.operationId as string,
    {
      sunset: new Date(op.sunset),
      deprecation: `@${Math.floor(Date.parse(op.deprecatedAt) / 1000)}`,
      /** The replacement request with this request's path parameters filled in (e.g. /pets?id=42). */
      successor: (params: Record<string, string>) =>
        op.replacement.target.replace(/\{(\w+)\}/g, (_, name: string) => params[name] ?? ''),
      removed: `${op.method} ${op.path} was removed on ${op.sunset.slice(0, 10)}`,
    },
  ]),
);

/** The request's operation (resolved at the head of the chain) when it is deprecated, with its successor. */
const find = (res: Response) => {
  const operation = res.locals.operation;
  const op = operation && byOperationId.get(operation.id);
  return op && { op, successor: op.successor(operation.params) };
};

/** Sets the deprecation headers on every response of a deprecated operation, errors included. */
export function announceDeprecations(req: Request, res: Response, next: NextFunction) {
  const found = find(res);
  if (found) {
    res.set({
      Deprecation: found.op.deprecation,
      Sunset: found.op.sunset.toUTCString(),
      Link: `<${req.baseUrl}${found.successor}>; rel="successor-version"`,
    });
  }
  next();
}

/** From the sunset on, a removed operation answers 410, naming its replacement. */
export function enforceSunsets(_req: Request, res: Response, next: NextFunction) {
  const found = find(res);
  if (!found || Date.now() < found.op.sunset.getTime()) return next();
  next(new HttpError(410, `${found.op.removed}; use GET ${found.successor} instead.`, 'gone'));
}
