// Counts every /v1 request against its key's windows (or its address's, without a valid key), sets the
// rate-limit headers on the response whatever happens next, and answers 429 beyond the limit.
import type { NextFunction, Request, Response } from 'express';
import type { RateLimiter, WindowState } from '../limits/limiter.js';
import { windows } from '../limits/plans.js';
import { Problem } from './problem.js';

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

export function headersFor(states: WindowState[], now = Date.now()): Record<string, string> {
  // X-RateLimit-*: the window with the fewest remaining requests; on a tie the first (shorter) one.
  const tightest = states.reduce((best, s) => (s.remaining < best.remaining ? s : best));
  return {
    'X-RateLimit-Limit': String(tightest.limit),
    'X-RateLimit-Remaining': String(tightest.remaining),
    'X-RateLimit-Reset': String(Math.ceil((now + tightest.resetMs) / 1000)),
    // draft-ietf-httpapi-ratelimit-headers-11: every window; t is delta-seconds.
    'RateLimit-Policy': states.map((s) => `"${s.name}";q=${s.limit};w=${windows[s.name]}`).join(', '),
    RateLimit: states.map((s) => `"${s.name}";r=${s.remaining};t=${seconds(s.resetMs)}`).join(', '),
  };
}

export function rateLimit(limiter: RateLimiter) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const key = res.locals.apiKey;
    const decision = await limiter.consume(
      key
        ? { kind: 'key', id: key.id, perMinute: key.quota.perMinute, perDay: key.quota.perDay }
        : { kind: 'address', address: req.ip ?? req.socket.remoteAddress ?? 'unknown' },
    );
    res.set(headersFor(decision.windows));
    if (decision.allowed) return next();
    const wait = seconds(decision.retryAfterMs);
    const message =
      decision.code === 'temporarily_banned'
        ? `This API key is temporarily banned for sending requests while rate limited; retry in ${wait} seconds.`
        : `Rate limit exceeded; retry in ${wait} seconds.`;
    next(new Problem(429, message, decision.code, { 'Retry-After': String(wait) }));
  };
}
