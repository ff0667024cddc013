// GET /metrics: the registry of ops/metrics.ts in Prometheus's text format (with WORKERS > 1, the whole
// cluster's: ops/cluster-metrics.ts); with METRICS_TOKEN, only for
// `Authorization: Bearer <token>` (compared in constant time), else a 401 in the Error shape.
import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { HttpError, sendError } from '../http/http-error.js';
import type { Metrics } from '../ops/metrics.js';

export function metricsEndpoint(
  metrics: Pick<Metrics, 'registry' | 'scrape'>,
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
    let text: string;
    try {
      text = await metrics.scrape();
    } catch {
      // WORKERS > 1 and the primary did not answer in time: scrape again.
      return sendError(
        res,
        new HttpError(
          503,
          'The metrics of every worker could not be gathered; retry.',
          'service_unavailable',
          {
            'Retry-After': '5',
          },
        ),
      );
    }
    res.set('Content-Type', metrics.registry.contentType).send(text);
  };
}
