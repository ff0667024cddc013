// Deprecated operations, driven by the contract (x-deprecated-at, x-sunset, x-replacement): every response
// announces the deprecation (RFC 9745), the sunset (RFC 8594) and the successor; from the sunset instant
// on, by the real clock, the operation answers 410.
import { deprecatedOperations } from '@animal-store/spec';
import { type NextFunction, type Request, type Response, Router } from 'express';
import { Problem } from './problem.js';

const expressPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

export function deprecations(basePath: string) {
  const announce = Router();
  const enforce = Router();
  for (const op of deprecatedOperations) {
    const method = op.method.toLowerCase() as 'get';
    const path = basePath + expressPath(op.path);
    const sunset = new Date(op.sunset);
    const headers = {
      Deprecation: `@${Math.floor(Date.parse(op.deprecatedAt) / 1000)}`,
      Sunset: sunset.toUTCString(),
      Link: `<${basePath}${op.replacement.path}>; rel="successor-version"`,
    };
    const message = `${op.method} ${op.path} was removed on ${op.sunset.slice(0, 10)}; use ${op.method} ${op.replacement.path} instead.`;
    announce[method](path, (_req: Request, res: Response, next: NextFunction) => {
      res.set(headers);
      next();
    });
    enforce[method](path, (_req: Request, _res: Response, next: NextFunction) => {
      next(Date.now() >= sunset.getTime() ? new Problem(410, message, 'gone') : undefined);
    });
  }
  return { announce, enforce };
}
