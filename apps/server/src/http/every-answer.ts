// Headers an API sets on every answer under its base path, errors included.
import type { NextFunction, Request, Response } from 'express';

/**
 * Sets `headers` on the response now, and names them in `res.locals.everyAnswer` so that an error answered
 * later keeps them (sendError drops the headers a failed file set, Cache-Control among them, then sets
 * these again).
 */
export function everyAnswer(headers: Record<string, string>) {
  return function everyAnswer(_req: Request, res: Response, next: NextFunction) {
    res.locals.everyAnswer = headers;
    res.set(headers);
    next();
  };
}
