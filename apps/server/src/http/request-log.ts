// One structured log line per request (pino-http), with a request id that the client may supply via
// X-Request-Id and always gets back. Only method, url and status are logged: never headers, so never the
// Authorization header or a key.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';

const acceptable = /^[A-Za-z0-9._-]{1,128}$/;

export function requestLog(logger: Logger) {
  return pinoHttp({
    logger,
    wrapSerializers: false, // ours below already pick the few fields we log
    genReqId: (req: IncomingMessage, res: ServerResponse) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && acceptable.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({
        id: req.id,
        method: req.method,
        url: req.url,
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      err: (err: Error) => ({ type: err.name, message: err.message }), // no stack traces in logs
    },
  });
}
