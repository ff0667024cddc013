// A path that is not valid percent-encoding names nothing: 400 (after the key check and the limiter).
import type { NextFunction, Request, Response } from 'express';
import { HttpError } from './http-error.js';

/** A path that is not valid percent-encoding names nothing: 400 (after the key check and the limiter). */
export function decodablePath(req: Request, _res: Response, next: NextFunction) {
  const path = req.path;
  if (!path.includes('%')) return next(); // nothing to decode: the common case, on every request
  try {
    decodeURIComponent(path);
    next();
  } catch {
    next(new HttpError(400, 'The request could not be read: the path is not valid percent-encoding.'));
  }
}
