import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { requestBodyLimit } from '@animal-store/spec';
import { describe, expect, it } from 'vitest';
import { type Failure, fromBodyParser, fromExpress, fromValidator, toHttpError } from './error-sources.js';
import { answers, HttpError } from './http-error.js';

/** An error shaped as its library throws it. */
const failure = (fields: Partial<Failure>, message = 'library message'): Failure =>
  Object.assign(new Error(message), fields);
type Row = [name: string, error: Failure, status: number, code: string, message: RegExp, headers?: object];

describe('fromBodyParser', () => {
  it.each<Row>([
    [
      'invalid JSON',
      failure({ type: 'entity.parse.failed', body: '{"name":' }),
      400,
      'invalid_request',
      /not valid JSON/,
    ],
    [
      'JSON that is not an object',
      failure({ type: 'entity.parse.failed', body: 'null' }),
      400,
      'invalid_request',
      /must be a JSON object/,
    ],
    [
      'a body that is not UTF-8',
      failure({ type: 'body.not.utf8' }),
      400,
      'invalid_request',
      /not valid UTF-8/,
    ],
    [
      'a body over the limit',
      failure({ type: 'entity.too.large' }),
      413,
      'payload_too_large',
      /exceeds the 16 KiB limit/,
      { Connection: 'close' },
    ],
    ['another charset', failure({ type: 'charset.unsupported' }), 415, 'unsupported_media_type', /UTF-8/],
    ['a content encoding', failure({ type: 'encoding.unsupported' }), 415, 'unsupported_media_type', /UTF-8/],
  ])('%s', (_, error, status, code, message, headers = {}) => {
    const answer = fromBodyParser(error);
    expect(answer?.body).toEqual({ code, message: expect.stringMatching(message), status });
    expect(answer?.headers).toEqual(headers);
  });

  it('claims nothing else', () => {
    expect(fromBodyParser(failure({ status: 400 }))).toBeUndefined();
  });
});

describe('fromValidator', () => {
  const errors = [{ path: '/query/limit', message: 'must be <= 100' }];
  it.each<Row>([
    [
      'a field that breaks the contract',
      failure({ status: 400, errors }),
      400,
      'invalid_request',
      /^query\.limit must be <= 100$/,
    ],
    [
      'a path parameter',
      failure({ status: 400, errors: [{ path: '/params/petId', message: 'must be integer' }] }),
      400,
      'invalid_request',
      /^path\.petId must be integer$/,
    ],
    ['an unknown route', failure({ status: 404, errors }), 404, 'not_found', /No such route/],
    [
      'a method the path lacks',
      failure({ status: 405, errors, headers: { Allow: 'GET, POST' } }),
      405,
      'method_not_allowed',
      /does not support/,
      { Allow: 'GET, HEAD, POST' },
    ],
    [
      'a body that is not JSON',
      failure({ status: 415, errors }),
      415,
      'unsupported_media_type',
      /application\/json/,
    ],
  ])('%s', (_, error, status, code, message, headers = {}) => {
    const answer = fromValidator(error);
    expect(answer?.body).toEqual({ code, message: expect.stringMatching(message), status });
    expect(answer?.headers).toEqual(headers);
  });

  it('claims no error without its list, nor a 5xx (a response that breaks the contract)', () => {
    expect(fromValidator(failure({ status: 400 }))).toBeUndefined();
    expect(fromValidator(failure({ status: 500, errors }))).toBeUndefined();
  });
});

describe('fromExpress', () => {
  it('answers a client error of Express itself with its message, which describes the request', () => {
    expect(fromExpress(failure({ status: 400 }, "Failed to decode param '%E0%A4%A'"))?.body).toEqual({
      code: 'invalid_request',
      message: "The request could not be read: Failed to decode param '%E0%A4%A'.",
      status: 400,
    });
  });

  it.each([
    ['no status', failure({})],
    ['a server error', failure({ status: 503 })],
    ["a status the contract's table lacks", failure({ status: 418 })],
    ["the validator's", failure({ status: 400, errors: [] })],
  ])('claims nothing with %s', (_, error) => {
    expect(fromExpress(error)).toBeUndefined();
  });
});

describe('toHttpError', () => {
  it('passes an HttpError through, and answers what no source claims with a generic 500', () => {
    const own = new HttpError(409, 'in progress', 'idempotency_in_progress');
    expect(toHttpError(own)).toBe(own);
    const bug = toHttpError(new TypeError("Cannot read properties of undefined (reading 'id')"));
    expect(bug.body).toEqual({
      code: 'internal_error',
      message: 'An unexpected error occurred.',
      status: 500,
    });
  });
});

describe('the catalogue: one condition, one answer wherever it is met', () => {
  it("a body over the limit: body-parser's error and the declared-size check answer alike", () => {
    expect(fromBodyParser(failure({ type: 'entity.too.large' }))).toEqual(answers.bodyTooLarge());
    expect(answers.bodyTooLarge().body.message).toBe(
      `The request body exceeds the ${requestBodyLimit / 1024} KiB limit.`,
    );
  });

  it("a body that is not JSON: body-parser's, the charset check's and the validator's 415 answer alike", () => {
    const errors = [{ path: '/body', message: 'unsupported media type' }];
    expect(fromValidator(failure({ status: 415, errors }))).toEqual(answers.notJson());
    expect(fromBodyParser(failure({ type: 'charset.unsupported' }))).toEqual(answers.notJson());
  });

  it.each([
    ['413', 'PayloadTooLarge.yaml', answers.bodyTooLarge()],
    ['415', 'UnsupportedMediaType.yaml', answers.notJson()],
  ])("the contracts' examples of the %s say what the service says", (_, name, answer) => {
    for (const file of [`openapi/components/responses/${name}`, `admin/components/responses/${name}`]) {
      const text = readFileSync(fileURLToPath(new URL(`../../../../spec/${file}`, import.meta.url)), 'utf8');
      expect(text, file).toContain(answer.body.message);
    }
  });
});
