import { describe, expect, it } from 'vitest';
import { ApiError } from './errors.js';

describe('ApiError', () => {
  const rateLimit = { limit: 60, remaining: 0, reset: new Date(2_000_000_000_000), retryAfter: 17 };

  it('is built from one options object, named, with every field', () => {
    const fields = {
      code: 'rate_limited' as const,
      message: 'Rate limit exceeded; retry in 17 seconds.',
      status: 429,
      requestId: 'req-1',
      rateLimit,
      retryAfter: 17,
    };
    const error = new ApiError(fields);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ApiError');
    expect({ ...error, message: error.message }).toEqual({ name: 'ApiError', ...fields });
  });

  it('still takes the positional arguments of 1.1 (deprecated), with the same result', () => {
    const positional = new ApiError('not_found', 'Pet 7 was not found.', 404, 'req-2', undefined);
    const options = new ApiError({
      code: 'not_found',
      message: 'Pet 7 was not found.',
      status: 404,
      requestId: 'req-2',
    });
    expect({ ...positional, message: positional.message }).toEqual({ ...options, message: options.message });
  });
});
