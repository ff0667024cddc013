// One structured log line per request, with a request id that the client may supply via X-Request-Id and
// always gets back. Only method, url and status are logged: never headers (so never the Authorization
// header), and in the url only the values of documented query parameters, so that a key pasted into the
// query string (`?api_key=...`) never reaches the log.
//
// Written by hand over pino (the logger) instead of pino-http: docs/decisions.md#request-log.
import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { whenDone } from '../when-done.js';
import { clientAddress } from './client-address.js';
import { shuttingDown } from './shutting-down.js';

declare module 'node:http' {
  interface IncomingMessage {
    /** The request id (X-Request-Id), set by requestLog. */
    id: string;
  }
}

const acceptable = /^[A-Za-z0-9._-]{1,128}$/;

/** The url with the value of every query parameter outside `documented` replaced by `[redacted]`. */
export function redactQuery(url: string, documented: Set<string>): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  // One pass, a name decoded only when it has an escape: this runs on every request with a query.
  const pairs = url.slice(start + 1).split('&');
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i] as string;
    const equals = pair.indexOf('=');
    if (equals < 0) continue;
    const name = pair.slice(0, equals);
    let decoded = name;
    if (name.includes('%'))
      try {
        decoded = decodeURIComponent(name);
      } catch {}
    if (!documented.has(decoded)) pairs[i] = `${name}=[redacted]`;
  }
  return `${url.slice(0, start)}?${pairs.join('&')}`;
}

/** A request's id: the client's X-Request-Id when it is acceptable, else a new one (also for server.ts). */
export const requestId = (given?: string | string[]): string =>
  typeof given === 'string' && acceptable.test(given) ? given : randomUUID();

/**
 * The middleware: sets the request id (the client's, with `clientIds`; the admin listener makes its own,
 * since its ids name the requests of the audit trail), then logs one line when the response is done: `request completed`
 * (level info; error for a 5xx, as `request errored`), with the key id (never its secret) and the client's
 * address (after TRUST_PROXY) to say who, and `aborted: true` when the response was not answered (the
 * client left before the answer, or before its request was complete: see when-done.ts).
 */
export function requestLog(logger: Logger, documentedQuery: Set<string>, clientIds = true) {
  return function requestLog(req: Request, res: Response, next: NextFunction) {
    const started = performance.now();
    const id = clientIds ? requestId(req.headers['x-request-id']) : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    const method = req.method; // before headAsGet answers a HEAD as a GET
    whenDone(res, (answered) => {
      const { apiKey } = res.locals;
      const line: Record<string, unknown> = {
        req: { id, method, url: redactQuery(req.originalUrl, documentedQuery) },
        res: { statusCode: res.statusCode },
        responseTime: Math.round(performance.now() - started),
      };
      if (apiKey) line.keyId = apiKey.id;
      line.client = clientAddress(req);
      if (!answered) line.aborted = true;
      // A 503 while the server drains is the shutdown working (readiness failing on purpose), not an error.
      if (res.statusCode >= 500 && !shuttingDown(req)) logger.error(line, 'request errored');
      else logger.info(line, 'request completed');
    });
    next();
  };
}
