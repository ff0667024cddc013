// One structured log line per request (pino-http), with a request id that the client may supply via
// X-Request-Id and always gets back. Only method, url and status are logged: never headers (so never the
// Authorization header), and in the url only the values of documented query parameters, so that a key
// pasted into the query string (`?api_key=...`) never reaches the log.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';

const acceptable = /^[A-Za-z0-9._-]{1,128}$/;

/** The url with the value of every query parameter outside `documented` replaced by `[redacted]`. */
export function redactQuery(url: string, documented: Set<string>): string {
  const start = url.indexOf('?');
  if (start < 0) return url;
  const query = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const [name = '', value] = pair.split('=');
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {}
      return value === undefined || documented.has(decoded) ? pair : `${name}=[redacted]`;
    });
  return `${url.slice(0, start)}?${query.join('&')}`;
}

export function requestLog(logger: Logger, documentedQuery: Set<string>) {
  return pinoHttp({
    logger,
    wrapSerializers: false, // ours below already pick the few fields we log
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && acceptable.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    // Who: the key's id (never its secret) and the client's address (after TRUST_PROXY).
    customProps: (req, res) => {
      const { apiKey } = (res as unknown as { locals?: { apiKey?: { id: string } } }).locals ?? {};
      return {
        ...(apiKey && { keyId: apiKey.id }),
        client: (req as { ip?: string }).ip ?? req.socket.remoteAddress,
      };
    },
    serializers: {
      req: (req: { id: string; method: string; url: string; originalUrl?: string; head?: boolean }) => ({
        id: req.id,
        method: req.head ? 'HEAD' : req.method,
        url: redactQuery(req.originalUrl ?? req.url, documentedQuery),
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      err: (err: Error) => ({ type: err.name, message: err.message }), // no stack traces in logs
    },
  });
}
