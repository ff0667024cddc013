// createAdminApp: the admin API's own Express app, for its own listener (ADMIN_PORT): the admin contract
// and its docs page outside the base path; under it (`/admin/v1`), in this order: the admin token → its
// rate limit → decodable path → canonical query integers → JSON body → admin contract validation (requests
// and responses) → operations (routes.ts); then the JSON 404 and the error handler. Nothing of the public
// API is mounted here, and nothing of this on the public app.
import { fileURLToPath } from 'node:url';
import { requestBodyLimit } from '@animal-store/spec';
import express, { type Express, Router } from 'express';
import type { Logger } from 'pino';
import { documentedQuery, integerQueryParameters, loadAdminContract } from '../contract.js';
import { canonicalIntegers } from '../http/canonical-integers.js';
import { decodablePath } from '../http/decodable-path.js';
import { docsPage } from '../http/docs-page.js';
import { errorHandler, notFound } from '../http/errors.js';
import { HttpError } from '../http/http-error.js';
import { jsonBody } from '../http/json-body.js';
import { parseQueryOnce } from '../http/plain-query-names.js';
import { seconds } from '../http/rate-limit.js';
import { requestLog } from '../http/request-log.js';
import { type ContractViolation, contractValidator, schemaChecks } from '../http/validation.js';
import { memoryCounters } from '../limits/memory-counters.js';
import { createRateLimiter } from '../limits/policy.js';
import { type Metrics, operations } from '../ops/metrics.js';
import type { StoreHealth } from '../ops/store-health.js';
import { serverSpans } from '../tracing/spans.js';
import { auditLog } from './audit.js';
import { type AdminDeps, adminRoutes } from './routes.js';
import { requireAdminToken } from './tokens.js';

/** The admin API reference, rendered from the admin contract at build time (see package.json). */
const docsPath = fileURLToPath(new URL('../../dist/admin-docs.html', import.meta.url));

export type AdminAppDeps = Omit<AdminDeps, 'audit'> & {
  logger: Logger;
  /** ADMIN_TOKENS: every one is accepted. */
  tokens: string[];
  /** Requests a minute per admin token (per instance). */
  perMinute: number;
  /** The service's metrics (audit records are counted there, and store errors). */
  metrics: Pick<Metrics, 'adminChanges' | 'storeErrors'>;
  /** The service's record of whether the store takes writes (the public app's /readyz reads it). */
  health?: StoreHealth;
  /** OpenTelemetry is on: each request's span is described (tracing/spans.ts). */
  tracing?: boolean;
  /** Called for every response that breaks the admin contract (it is also answered 500); logs by default. */
  onContractViolation?: (violation: ContractViolation) => void;
};

export function createAdminApp(deps: AdminAppDeps): Express {
  const { logger } = deps;
  const { contract, basePath } = loadAdminContract();
  // Per admin token, in this process's memory: the admin API is for a few systems, not the public.
  const limiter = createRateLimiter(memoryCounters(), {
    ban: { threshold: Number.MAX_SAFE_INTEGER, seconds: 1 },
    anonymousPerMinute: deps.perMinute,
  });

  const onViolation =
    deps.onContractViolation ??
    ((violation: ContractViolation) =>
      logger.error({ violation }, 'admin response breaks the admin contract'));
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(requestLog(logger, documentedQuery(contract)));
  app.get('/openapi.json', (_req, res) => {
    res.json(contract);
  });
  app.get('/docs', docsPage(docsPath));

  const api = Router();
  app.use(basePath, api);
  if (deps.tracing) api.use(serverSpans(operations(contract, basePath)));
  api.use(parseQueryOnce);
  api.use(requireAdminToken(deps.tokens));
  api.use(async function limitAdminToken(_req, res, next) {
    const decision = await limiter.consume({ kind: 'address', address: res.locals.adminToken as string });
    if (decision.allowed) return next();
    const wait = seconds(decision.retryAfterMs);
    next(
      new HttpError(429, `Admin rate limit exceeded; retry in ${wait} seconds.`, 'rate_limited', {
        'Retry-After': String(wait),
      }),
    );
  });
  api.use(decodablePath);
  api.use(canonicalIntegers(integerQueryParameters(contract)));
  api.use(jsonBody(requestBodyLimit));
  api.use(contractValidator(contract, onViolation));
  api.use(adminRoutes({ ...deps, audit: auditLog(logger, deps.metrics) }));
  app.use(notFound(basePath));
  const checks = schemaChecks(contract, onViolation); // 5xx bodies against the admin contract's Error
  app.use(errorHandler(logger, deps.metrics.storeErrors, deps.health, (req) => checks('Error', req)));
  return app;
}
