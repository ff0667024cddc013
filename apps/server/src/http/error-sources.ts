// Every failure a request can meet, turned into the HttpError that answers it: one small function per
// source (body-parser, express-openapi-validator, Express's own layers), each answering undefined for an
// error that is not its own. The error handler (errors.ts) asks them in turn; what none claims is a 500.
// Table-driven tests beside this file (error-sources.test.ts).
import { answers, codeForStatus, HttpError } from './http-error.js';

/** An error as the libraries throw them: a status, and the fields each source adds. */
export type Failure = Error & {
  status?: number;
  type?: string;
  body?: unknown;
  headers?: Record<string, string>;
  errors?: { path: string; message: string }[];
};

const isJson = (text: unknown) => {
  try {
    JSON.parse(String(text));
    return true;
  } catch {
    return false;
  }
};

/** body-parser's errors (express.json): its `type` names what went wrong with the body. */
export function fromBodyParser(error: Failure): HttpError | undefined {
  switch (error.type) {
    case 'entity.parse.failed':
      // Strict mode refuses valid JSON that is not an object or array (e.g. `null`).
      return new HttpError(
        400,
        isJson(error.body)
          ? 'The request body must be a JSON object.'
          : 'The request body is not valid JSON.',
      );
    case 'body.not.utf8':
      return new HttpError(400, 'The request body is not valid UTF-8.');
    case 'entity.too.large':
      return answers.bodyTooLarge();
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return answers.notJson();
    default:
      return undefined;
  }
}

/**
 * Patterns of the contracts whose regular expression says nothing to a person (the console shows these
 * messages as they come), in words.
 */
const patternWords: Record<string, string> = {
  '^[0-9a-f]{12}$': 'must be a key id: 12 characters, each 0-9 or a-f',
};

/** Ajv's wording where it does not say what to do: the rule, in the client's terms. */
const rephrased = (message: string) =>
  message
    .replace(/^must NOT have fewer than (\d+) properties$/, (_, n) =>
      n === '1' ? 'must name at least one field' : `must name at least ${n} fields`,
    )
    .replace(/^must match pattern "(.*)"$/, (said, pattern: string) => patternWords[pattern] ?? said);

const fieldMessages = (errors: { path: string; message: string }[]) =>
  errors
    .map(
      (e) =>
        `${e.path
          .replace(/^\//, '')
          .replace(/^params\b/, 'path')
          .replaceAll('/', '.')} ${rephrased(e.message)}`,
    )
    .join('; ');

/** express-openapi-validator's errors (an `errors` list): 400 with the failing fields, 404, 405 with Allow, 415 (the catalogue's). */
export function fromValidator(error: Failure): HttpError | undefined {
  if (!Array.isArray(error.errors) || error.status === undefined || error.status >= 500) return undefined;
  if (error.status === 415) return answers.notJson(); // one text for a body that is not JSON
  const messages: Record<number, string> = {
    400: fieldMessages(error.errors),
    404: 'No such route.',
    405: 'This path does not support this method.',
  };
  if (!codeForStatus.has(error.status)) return undefined;
  // HEAD is served wherever GET is (see headAsGet), so it is allowed wherever GET is.
  const allow = error.headers?.Allow?.replace(/\bGET\b/, 'GET, HEAD');
  return new HttpError(
    error.status,
    messages[error.status] ?? error.message,
    undefined,
    allow ? { Allow: allow } : {},
  );
}

/**
 * The static pages' file sender (`send`, behind res.sendFile and express.static): a Range no part of the
 * file satisfies (416, its size in the Content-Range it names) and a failed If-Match or
 * If-Unmodified-Since (412). Answered as client errors, never as a 500 anyone can cause with a header.
 */
export function fromSend(error: Failure): HttpError | undefined {
  if (Array.isArray(error.errors)) return undefined;
  if (error.status === 416) {
    const range = error.headers?.['Content-Range'];
    return new HttpError(
      416,
      'The requested range is not satisfiable.',
      undefined,
      range ? { 'Content-Range': range } : {},
    );
  }
  if (error.status === 412) return new HttpError(412, 'A precondition of the request is not met.');
  return undefined;
}

/**
 * Client errors of Express's own layers (a status, no `errors` list): a path that is not valid
 * percent-encoding (the router), a body that cannot be inflated (body-parser). Their messages describe the
 * request, never the server.
 */
export function fromExpress(error: Failure): HttpError | undefined {
  const status = error.status;
  if (status === undefined || status < 400 || status >= 500 || !codeForStatus.has(status)) return undefined;
  if (Array.isArray(error.errors)) return undefined;
  return new HttpError(status, `The request could not be read: ${error.message}.`);
}

/** The answer to a failure that is not the store's (the handler checks storeFailure first). */
export function toHttpError(error: Failure): HttpError {
  if (error instanceof HttpError) return error;
  return (
    fromBodyParser(error) ??
    fromValidator(error) ??
    fromSend(error) ??
    fromExpress(error) ??
    answers.unexpected()
  );
}
