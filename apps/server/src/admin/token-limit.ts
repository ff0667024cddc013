// The admin API's rate limit: ADMIN_RATE_LIMIT_PER_MINUTE requests a minute per admin token, counted in this
// process's memory (the admin API serves a few systems, and each process counts its own: README). One fixed
// window per token from the memory counters; no lease and no ban, which are the public API's policy.
import type { RequestHandler } from 'express';
import { answers } from '../http/http-error.js';
import { memoryCounters } from '../limits/memory-counters.js';

const minuteMs = 60_000;

export function limitAdminToken(perMinute: number, now = () => Date.now()): RequestHandler {
  const counters = memoryCounters(now);
  return async function limitAdminToken(_req, res, next) {
    const { granted, resetAt } = await counters.take(
      `admin:${res.locals.adminToken}`,
      1,
      perMinute,
      minuteMs,
    );
    if (granted > 0) return next();
    next(answers.rateLimited(resetAt - now(), 'Admin rate limit'));
  };
}
