// Counts every /v1 request against its key's windows (or its address's, without a valid key), sets the
// rate-limit headers on the response whatever happens next, and answers 429 beyond the limit.
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { clientAddress } from '../http/client-address.js';
import { answers, seconds } from '../http/http-error.js';
import type { Decision, RateLimiter, Subject, WindowState } from '../limits/policy.js';
import { windowSeconds } from '../plans.js';
import { StoreUnavailableError, storeFailure } from '../store/unavailable.js';

export function headersFor(states: WindowState[], now = Date.now()): Record<string, string> {
  // X-RateLimit-*: the window with the fewest remaining requests; on a tie the first (shorter) one.
  // draft-ietf-httpapi-ratelimit-headers-11: every window; t is delta-seconds. One pass, no closures: this
  // runs on every request.
  let tightest = states[0] as WindowState;
  let policy = '';
  let limit = '';
  for (let i = 0; i < states.length; i++) {
    const s = states[i] as WindowState;
    if (s.remaining < tightest.remaining) tightest = s;
    const separator = i === 0 ? '' : ', ';
    policy += `${separator}"${s.name}";q=${s.limit};w=${windowSeconds[s.name]}`;
    limit += `${separator}"${s.name}";r=${s.remaining};t=${seconds(s.resetAt - now)}`;
  }
  return {
    'X-RateLimit-Limit': String(tightest.limit),
    'X-RateLimit-Remaining': String(tightest.remaining),
    'X-RateLimit-Reset': String(Math.ceil(tightest.resetAt / 1000)),
    'RateLimit-Policy': policy,
    RateLimit: limit,
  };
}

/** Counts what the limiter decided (see ops/metrics.ts). */
export type DecisionCounters = {
  decisions: { inc(labels: { plan: string; decision: string }): void };
  bans: { inc(labels: { plan: string }): void };
};

/** Counts each decision on a key for its usage (see usage/meter.ts). */
export type UsageRecorder = { record(keyId: string, outcome: 'admitted' | 'limited' | 'banned'): void };

export function rateLimit(
  limiter: RateLimiter,
  logger: Logger,
  counters?: DecisionCounters,
  usage?: UsageRecorder,
) {
  /** Answers the request as the limiter decided: its headers, its counts, then on or a 429. */
  const decided = (req: Request, res: Response, next: NextFunction, decision: Decision) => {
    const key = res.locals.apiKey;
    // Node's setHeader: Express's res.set would look at each name again for a content type.
    const headers = headersFor(decision.windows);
    for (const name in headers) res.setHeader(name, headers[name] as string);
    const plan = key?.plan ?? 'anonymous';
    const outcome = decision.allowed
      ? 'admitted'
      : decision.code === 'temporarily_banned'
        ? 'banned'
        : 'limited';
    counters?.decisions.inc({ plan, decision: outcome });
    res.locals.rateLimit = outcome;
    if (key) usage?.record(key.id, outcome);
    if (decision.allowed) return next();
    if (decision.banStarted && key) {
      counters?.bans.inc({ plan });
      logger.warn(
        { reqId: req.id, keyId: key.id, plan, banSeconds: seconds(decision.retryAfterMs) },
        'key banned for sending while rate limited',
      );
    }
    next(
      decision.code === 'temporarily_banned'
        ? answers.temporarilyBanned(decision.retryAfterMs)
        : answers.rateLimited(decision.retryAfterMs),
    );
  };
  // The counters' store failed: the request cannot be counted, so it is not served (503, retry).
  const storeFailed = (error: unknown) => {
    throw (
      storeFailure(error) ??
      new StoreUnavailableError(`the rate-limit store failed: ${(error as Error).message}`)
    );
  };
  return function rateLimit(req: Request, res: Response, next: NextFunction) {
    const key = res.locals.apiKey;
    const subject: Subject = key
      ? { kind: 'key', id: key.id, perMinute: key.quota.perMinute, perDay: key.quota.perDay }
      : { kind: 'address', address: clientAddress(req) };
    // The common path decides in memory, without a promise; the rest asks the store.
    const inMemory = limiter.admitInMemory(subject);
    if (inMemory) return decided(req, res, next, inMemory);
    return limiter.consume(subject).then((decision) => decided(req, res, next, decision), storeFailed);
  };
}
