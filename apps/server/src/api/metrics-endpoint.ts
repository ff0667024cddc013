// GET /metrics: the registry of ops/metrics.ts in Prometheus's text format; with METRICS_TOKEN, only for
// `Authorization: Bearer <token>` (compared in constant time), else a 401 in the Error shape.
import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { HttpError, sendError } from '../http/http-error.js';
import type { Metrics } from '../ops/metrics.js';

export function metricsEndpoint(
  metrics: Pick<Metrics, 'registry'>,
  token: string | undefined,
): RequestHandler {
  const expected = token === undefined ? undefined : Buffer.from(`Bearer ${token}`);
  return async function metricsEndpoint(req, res) {
    if (expected) {
      const given = Buffer.from(req.get('authorization') ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        sendError(
          res,
          new HttpError(401, 'The metrics token is missing or wrong.', 'unauthorized', {
            'WWW-Authenticate': 'Bearer realm="metrics"',
          }),
        );
        return;
      }
    }
    res.set('Content-Type', metrics.registry.contentType).send(await metrics.registry.metrics());
  };
}
