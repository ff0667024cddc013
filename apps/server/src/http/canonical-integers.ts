// Integers in the query must be written in plain decimal digits: the validator would coerce the rest.
import type { NextFunction, Request, Response } from 'express';
import { HttpError } from './http-error.js';

const canonical = /^(?:0|[1-9][0-9]*)$/;

/** `limit=010`, `1e1`, `0x0a` or ` 10` would all be coerced to numbers by the validator: refuse them. */
export function canonicalIntegers(names: Set<string>) {
  return function canonicalIntegers(req: Request, _res: Response, next: NextFunction) {
    for (const name of names) {
      const value = req.query[name]; // absent, one value, or a list (the name repeated)
      if (value === undefined) continue;
      const loose = Array.isArray(value)
        ? value.some((v) => typeof v === 'string' && !canonical.test(v))
        : typeof value === 'string' && !canonical.test(value);
      if (loose) {
        return next(
          new HttpError(400, `query.${name} must be integer, written in plain decimal digits (e.g. 20).`),
        );
      }
    }
    next();
  };
}
