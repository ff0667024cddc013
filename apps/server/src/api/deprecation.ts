// Deprecated operations, driven by the contract (x-deprecated-at, x-sunset, x-replacement-target): every
// response announces the deprecation (RFC 9745), the sunset (RFC 8594) and the exact successor request;
// from the sunset instant on, by the real clock, the operation answers 410. Paths are matched on their
// text, without decoding parameters, so that announcing never fails a request before it is authenticated
// and counted.
import { deprecatedOperations } from '@animal-store/spec';
import type { NextFunction, Request, Response } from 'express';
import { HttpError } from '../http/http-error.js';

const operations = deprecatedOperations.map((op) => ({
  method: op.method,
  matches: new RegExp(`^${op.path.replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}/?$`),
  sunset: new Date(op.sunset),
  deprecation: `@${Math.floor(Date.parse(op.deprecatedAt) / 1000)}`,
  /** The replacement request with this request's path parameters filled in (e.g. /pets?id=42). */
  successor: (params: Record<string, string>) =>
    op.replacement.target.replace(/\{(\w+)\}/g, (_, name: string) => params[name] ?? ''),
  removed: `${op.method} ${op.path} was removed on ${op.sunset.slice(0, 10)}`,
}));

const find = (req: Request) => {
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  for (const op of operations) {
    const match = op.method === method ? op.matches.exec(req.path) : null;
    if (match) return { op, successor: op.successor(match.groups ?? {}) };
  }
  return undefined;
};

/** Sets the deprecation headers on every response of a deprecated operation, errors included. */
export function announceDeprecations(req: Request, res: Response, next: NextFunction) {
  const found = find(req);
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
export function enforceSunsets(req: Request, _res: Response, next: NextFunction) {
  const found = find(req);
  if (!found || Date.now() < found.op.sunset.getTime()) return next();
  next(new HttpError(410, `${found.op.removed}; use GET ${found.successor} instead.`, 'gone'));
}
