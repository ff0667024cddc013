import { describe, expect, it } from 'vitest';
import type { WindowState } from '../limits/policy.js';
import { headersFor } from './rate-limit.js';

const now = 1_800_000_000_000;
/** Windows ending `resetMs` after `now`. */
const minute = (remaining: number, resetMs: number): WindowState => ({
  name: 'minute',
  limit: 60,
  remaining,
  resetAt: now + resetMs,
});
const day = (remaining: number, resetMs: number): WindowState => ({
  name: 'day',
  limit: 1000,
  remaining,
  resetAt: now + resetMs,
});

describe('headersFor', () => {
  it.each([
    [
      'the minute window when it has fewer left',
      { given: [minute(5, 30_000), day(900, 3_600_000)] },
      { limit: '60', remaining: '5', reset: String(Math.ceil((now + 30_000) / 1000)) },
    ],
    [
      'the day window when it has fewer left',
      { given: [minute(50, 30_000), day(3, 3_600_000)] },
      { limit: '1000', remaining: '3', reset: String(Math.ceil((now + 3_600_000) / 1000)) },
    ],
    [
      'the shorter window on a tie',
      { given: [minute(0, 1_500), day(0, 3_600_000)] },
      { limit: '60', remaining: '0', reset: String(Math.ceil((now + 1_500) / 1000)) },
    ],
  ])('X-RateLimit-* describe %s', (_, { given }, want) => {
    const headers = headersFor(given, now);
    expect(headers['X-RateLimit-Limit']).toBe(want.limit);
    expect(headers['X-RateLimit-Remaining']).toBe(want.remaining);
    expect(headers['X-RateLimit-Reset']).toBe(want.reset);
  });

  it('RateLimit-Policy and RateLimit describe every window, t in whole delta-seconds (at least 1)', () => {
    const headers = headersFor([minute(5, 200), day(900, 3_600_001)], now);
    expect(headers['RateLimit-Policy']).toBe('"minute";q=60;w=60, "day";q=1000;w=86400');
    expect(headers.RateLimit).toBe('"minute";r=5;t=1, "day";r=900;t=3601');
  });
});
