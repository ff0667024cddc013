// The query, parsed once; parameter names with brackets refused, never silently read one way or another.
import type { NextFunction, Request, Response } from 'express';
import { HttpError } from './http-error.js';

/**
 * Express 5's `req.query` is a getter that parses the query string again on every read, and the layers
 * after this one read it a dozen times per request (our checks, the validator, the routes): it becomes
 * a plain property holding the first parse, which the validator may still replace.
 */
export function parseQueryOnce(req: Request, _res: Response, next: NextFunction) {
  Object.defineProperty(req, 'query', {
    value: req.query,
    writable: true,
    configurable: true,
    enumerable: true,
  });
  next();
}

/**
 * `?id[]=3` or `?status[x]=sold` would be read by some stacks as the parameter `id` and ignored by others:
 * a name with brackets is refused, never silently dropped (arrays repeat the name: `?id=3&id=4`).
 */
export function plainQueryNames(req: Request, _res: Response, next: NextFunction) {
  // A query with no bracket, plain or escaped, has no such name: one look at it, on every request.
  const start = req.url.indexOf('?');
  if (start < 0 || !/[[\]]|%5[bdBD]/.test(req.url.slice(start))) return next();
  for (const name of Object.keys(req.query)) {
    if (/[[\]]/.test(name)) {
      return next(
        new HttpError(
          400,
          `query.${name} is not a parameter: repeat plain names for lists (e.g. id=3&id=4).`,
        ),
      );
    }
  }
  next();
}
