// HEAD served as GET.
import type { NextFunction, Request, Response } from 'express';

/**
 * RFC 9110 expects HEAD wherever GET is served. The contract describes GET only, so a HEAD request is
 * validated, routed and answered as GET; Node still sends no body, because the response was created for
 * a HEAD request.
 */
export function headAsGet(req: Request, _res: Response, next: NextFunction) {
  if (req.method === 'HEAD') req.method = 'GET';
  next();
}
