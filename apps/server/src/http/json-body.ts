// The JSON body: its declared size (judged from Content-Length before a byte is read), its charset, then
// express.json with UTF-8 checked, then strings that have a UTF-8 form.
import { isUtf8 } from 'node:buffer';
import express, { type NextFunction, type Request, type Response } from 'express';
import { chain } from './chain.js';
import { answers, HttpError } from './http-error.js';

/**
 * express.json, after the checks that must come first: declared size, then charset. A request without a
 * body (neither Content-Length nor Transfer-Encoding: RFC 9112, as type-is's hasBody reads it), a GET's,
 * meets none of them.
 */
export function jsonBody(limitBytes: number) {
  const declaredSize = (req: Request, _res: Response, next: NextFunction) => {
    const length = Number(req.get('content-length') ?? 0);
    if (length <= limitBytes) return next();
    // Answered without reading the body; closing the connection saves the client from sending it.
    next(answers.bodyTooLarge(limitBytes));
  };
  const charset = (req: Request, _res: Response, next: NextFunction) => {
    const declared = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.get('content-type') ?? '')?.[1];
    if (declared === undefined || /^utf-8$/i.test(declared)) return next();
    next(answers.notJson());
  };
  const parse = express.json({
    limit: limitBytes,
    verify: (_req, _res, buffer) => {
      // body-parser would decode invalid bytes to U+FFFD and store something the client never sent.
      if (!isUtf8(buffer))
        throw Object.assign(new Error('not UTF-8'), { status: 400, type: 'body.not.utf8' });
    },
  });
  const withBody = chain([declaredSize, charset, parse, wellFormedStrings]);
  return function jsonBody(req: Request, res: Response, next: NextFunction) {
    const { headers } = req;
    if (headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) return next();
    withBody(req, res, next);
  };
}

const loneSurrogate = /\p{Cs}/u; // in Unicode mode a proper pair is one code point, never a Cs

/**
 * The path of the first string in `value` holding a lone surrogate, or undefined. Walked with a stack of
 * its own, not by recursion: a body within the size limit can nest thousands deep (`[[[[…]]]]`), past the
 * call stack.
 */
function illFormed(value: unknown): string | undefined {
  const pending: [unknown, string][] = [[value, 'body']];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, path] = next;
    if (typeof item === 'string') {
      if (loneSurrogate.test(item)) return path;
    } else if (typeof item === 'object' && item !== null) {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [name, inner] = entries[i] as [string, unknown];
        pending.push([inner, `${path}.${name}`]);
      }
    }
  }
  return undefined;
}

/**
 * A JSON escape like `\ud800` that is not half of a pair passes JSON.parse and the validator (it is one
 * code point to them) but has no UTF-8 form: stored, it would read back as something else (the contract's
 * NewPet.name description).
 */
function wellFormedStrings(req: Request, _res: Response, next: NextFunction) {
  const field = illFormed(req.body);
  if (!field) return next();
  next(new HttpError(400, `${field} must not contain lone surrogates (they have no UTF-8 form).`));
}
