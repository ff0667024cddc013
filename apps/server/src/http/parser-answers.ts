// What Node's HTTP parser refuses, and a request on a connection past its address's slots, answered in the
// Error shape straight on the socket before Express ever sees a request (server.ts), and a request target
// in absolute form read as the origin form.
import { type IncomingMessage, STATUS_CODES } from 'node:http';
import { answers, type HttpError } from './http-error.js';
import { requestId } from './request-log.js';

/**
 * More header lines than this is refused with 431. Node would keep the first 2,000 and drop the rest
 * silently, an Authorization among them; the cap is well above what browsers and proxies send.
 */
export const maxHeaderLines = 200;

/** The parser's error codes, as the statuses RFC 9110 has for them; anything else is a 400. */
export const statusForParserError: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
  HPE_INVALID_METHOD: 501,
};

/** The answers written straight on the socket, by status (the catalogue's). */
const rawAnswers: Record<number, () => HttpError> = {
  400: answers.unparsable,
  408: answers.requestTimeout,
  431: () => answers.headersTooLarge(maxHeaderLines),
  501: answers.methodNotImplemented,
  503: answers.tooManyConnections,
};

/** A complete HTTP/1.1 response with the Error body, written straight to the socket. */
export function rawError(status: number): string {
  const error = (rawAnswers[status] ?? answers.unparsable)();
  const body = JSON.stringify(error.body);
  return [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...Object.entries(error.headers).map(([name, value]) => `${name}: ${value}`),
    `X-Request-Id: ${requestId()}`,
    '',
    body,
  ].join('\r\n');
}

/**
 * `GET http://host/v1/pets` (absolute form, RFC 9112 §3.2.2) is routed exactly like `GET /v1/pets`. Split by
 * RFC 3986's own pattern rather than WHATWG URL, which reads `http:///v1/pets` as host `v1`, path `/pets`.
 */
const absoluteForm = /^https?:\/\/[^/?#]*([^?#]*)(\?[^#]*)?/i;
export function toOriginForm(req: IncomingMessage): void {
  const target = req.url ?? '/';
  if (target.startsWith('/') || target === '*') return;
  const match = absoluteForm.exec(target);
  if (match) req.url = `${match[1] || '/'}${match[2] ?? ''}`;
  // anything else is not a URL at all: left as is, Express answers 404
}
