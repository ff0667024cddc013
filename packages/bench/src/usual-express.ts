// The usual Express stack a team would assemble in an afternoon for the same job (job.ts): Express 5,
// express-openapi-validator on requests and responses against the same contract, express-rate-limit in
// memory with a minute and a day window per key, pino-http, a prom-client histogram of request durations.
// Versions pinned in package.json: express-openapi-validator is 5.6.0, the newest release our patch does not
// touch (pnpm applies patches/express-openapi-validator@5.6.2.patch to every copy of 5.6.2 in the workspace,
// and a team would run it as released). It is a contestant in `pnpm bench`, not a reference: nothing
// imports it.
import { readFileSync } from 'node:fs';
import { bundledSpecPath } from '@animal-store/spec/files';
import type { RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { rateLimit } from 'express-rate-limit';
import { pinoHttp } from 'pino-http';
import { Histogram } from 'prom-client';
import { jobApp, listen } from './express-job.js';

const contract = { ...JSON.parse(readFileSync(bundledSpecPath, 'utf8')), servers: [{ url: '/v1' }] };
const duration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Request duration',
  labelNames: ['method', 'route', 'status'],
});

const perKey = (windowMs: number, quota: 'perMinute' | 'perDay') =>
  rateLimit({
    windowMs,
    limit: (_req, res) => res.locals.key.quota[quota],
    keyGenerator: (_req, res) => res.locals.key.id,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
  });
const measured: RequestHandler = (req, res, next) => {
  const end = duration.startTimer();
  res.on('finish', () =>
    end({ method: req.method, route: req.route?.path ?? 'unknown', status: res.statusCode }),
  );
  next();
};
listen(
  jobApp({
    etag: true, // Express's default, which a team would keep
    outer: [pinoHttp(), measured],
    keyed: [perKey(60_000, 'perMinute'), perKey(86_400_000, 'perDay')],
    inner: OpenApiValidator.middleware({
      apiSpec: contract,
      validateRequests: true,
      validateResponses: true,
    }),
  }),
);
