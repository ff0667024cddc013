// Query parameter names with brackets are refused, never silently read one way or another.
import type { NextFunction, Request, Response } from 'express';
import { HttpError } from './http-error.js';

/**
 * `?id[]=3` or `?status[x]=sold` would be read by some stacks as the parameter `id` and ignored by others:
 * a name with brackets is refused, never silently dropped (arrays repeat the name: `?id=3&id=4`).
 */
export function plainQueryNames(req: Request, _res: Response, next: NextFunction) {
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
