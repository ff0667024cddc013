import { ApiError } from '@animal-store/client/admin';
import { describe, expect, it } from 'vitest';
import { problem } from './session.js';

describe('a failure in words', () => {
  it('says the wait once: the service’s own words when they name it, else the Retry-After', () => {
    const refused = (message: string) =>
      problem(new ApiError({ code: 'rate_limited', message, status: 429, requestId: 'r1', retryAfter: 12 }));
    expect(refused('Admin token rate limit exceeded; retry in 12 seconds.')).toBe(
      'Admin token rate limit exceeded; retry in 12 seconds. (429 rate_limited, request r1).',
    );
    expect(refused('Slow down.')).toBe('Slow down. (429 rate_limited, request r1). Try again in 12 s.');
  });
});
