// `Expect` other than 100-continue (RFC 9110 §10.1.1): Node hands such requests to the server's
// 'checkExpectation' listener (server.ts), which marks them and passes them to the app like any request;
// this middleware then answers 417. Under /v1 it runs after the rate limiter, so the answer is identified,
// counted and carries the rate-limit headers; elsewhere it runs first.
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { HttpError } from './http-error.js';

export const unmetExpectation = Symbol('an Expect header other than 100-continue');
export type ExpectingRequest = IncomingMessage & { [unmetExpectation]?: true };

export function unsupportedExpectation(req: Request, _res: Response, next: NextFunction) {
  if (!(req as ExpectingRequest)[unmetExpectation]) return next();
  next(new HttpError(417, 'Only "Expect: 100-continue" is supported.', undefined, { Connection: 'close' }));
}

/** The same answer for the paths outside `basePath` (those inside get it from the /v1 router). */
export function unsupportedExpectationOutside(basePath: string) {
  return function unsupportedExpectationOutside(req: Request, res: Response, next: NextFunction) {
    const inside = req.path === basePath || req.path.startsWith(`${basePath}/`);
    return inside ? next() : unsupportedExpectation(req, res, next);
  };
}
