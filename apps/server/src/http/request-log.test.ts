// What the request log keeps of a url's query: the values of documented parameters only.
import { describe, expect, it } from 'vitest';
import { redactQuery } from './request-log.js';

describe('redactQuery', () => {
  const documented = new Set(['limit', 'status', 'cursor']);
  it.each([
    ['/v1/pets', '/v1/pets'],
    ['/v1/pets?limit=20', '/v1/pets?limit=20'],
    ['/v1/pets?limit=20&api_key=secret', '/v1/pets?limit=20&api_key=[redacted]'],
    ['/v1/pets?%6Cimit=20', '/v1/pets?%6Cimit=20'], // an escaped documented name is the same parameter
    ['/v1/pets?%E0%A4%A=1', '/v1/pets?%E0%A4%A=[redacted]'], // an escape that decodes to nothing
    ['/v1/pets?flag&token=a=b', '/v1/pets?flag&token=[redacted]'], // a name alone carries no value
    ['/v1/pets?status=available&status=sold', '/v1/pets?status=available&status=sold'],
  ])('%s is logged as %s', (url, logged) => {
    expect(redactQuery(url, documented)).toBe(logged);
  });
});
