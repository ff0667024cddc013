// createApp: wiring only, no listen. Outside the base path: liveness, readiness, the contract and its
// docs. Under it, one router, in this order: deprecation headers → identify the key → rate limit → CORS
// (answers preflights) → require a key → sunset → decodable path → HEAD as GET → canonical query
// integers → JSON body → contract validation → handlers (idempotency on createPet; response validation
// wraps them); then the JSON 404 and the error handler.
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { interfaceVersion, requestBodyLimit } from '@animal-store/spec';
import express, { type Express, Router } from 'express';
import type { Logger } from 'pino';
import type { TrustProxy } from './config.js';
import {
  basePath,
  documentedQuery,
  integerQueryParameters,
  loadContract,
  type OpenApiDocument,
  responseHeaders,
} from './contract.js';
import { canonicalIntegers } from './http/canonical-integers.js';
import { corsFor } from './http/cors.js';
import { decodablePath } from './http/decodable-path.js';
import { announceDeprecations, enforceSunsets } from './http/deprecation.js';
import { docsPage } from './http/docs-page.js';
import { errorHandler, notFound, storeUnavailable } from './http/errors.js';
import { unsupportedExpectation, unsupportedExpectationOutside } from './http/expectation.js';
import { headAsGet } from './http/head-as-get.js';
import { sendError } from './http/http-error.js';
import { idempotency } from './http/idempotency.js';
import { identify, requireKey } from './http/identify.js';
import { jsonBody } from './http/json-body.js';
import { metricsEndpoint } from './http/metrics-endpoint.js';
import { parseQueryOnce, plainQueryNames } from './http/plain-query-names.js';
import { rateLimit, type UsageRecorder } from './http/rate-limit.js';
import { requestLog } from './http/request-log.js';
import { type ContractViolation, contractValidator, schemaChecks } from './http/validation.js';
import type { RateLimiter } from './limits/policy.js';
import { createMetrics, type Metrics, operations } from './ops/metrics.js';
import { StoreHealth } from './ops/store-health.js';
import { createCursors } from './pets/cursor.js';
import { petRoutes } from './pets/routes.js';
import type { Store } from './store/store.js';
import { StoreUnavailableError, StoreUnwritableError } from './store/unavailable.js';
import { serverSpans } from './tracing/spans.js';
import { serverVersion } from './version.js';

/** The API reference, rendered from the contract by `redocly build-docs` at build time (see package.json). */
const docsPath = fileURLToPath(new URL('../dist/docs.html', import.meta.url)); // from src/ or dist/

export type AppDeps = {
  store: Store;
  limiter: RateLimiter;
  logger: Logger;
  /** Express 'trust proxy' (see TRUST_PROXY): lets the per-address limit see clients behind a proxy. */
  trustProxy?: TrustProxy | undefined;
  /** Called for every response that breaks the contract (it is also answered 500); logs by default. */
  onContractViolation?: (violation: ContractViolation) => void;
  /** The contract to enforce; the bundled one by default (tests pass a stricter copy). */
  contract?: OpenApiDocument;
  /** Origins allowed by CORS (`*` for any); none: CORS off. */
  corsOrigins?: string[];
  /** What runs (sqlite, postgres, postgres+redis): reported by the metrics' build info. */
  backend?: string;
  /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
  metricsToken?: string | undefined;
  /** Why the service runs degraded (reported by /readyz, still 200), or undefined. */
  degraded?: () => string | undefined;
  /** Counts each key's requests per day (usage/meter.ts); none: no metering. */
  usage?: UsageRecorder;
  /** The metrics /metrics serves (shared with the admin listener); made here when absent. */
  metrics?: Metrics;
  /** Whether the store takes writes, as every listener's requests found it (shared with the admin app, so
   * that an admin write that finds the disk full is seen by /readyz); made here when absent. */
  health?: StoreHealth;
  /** OpenTelemetry is on (tracing/start.ts ran): each request's span is described (tracing/spans.ts). */
  tracing?: boolean;
};

/** The service's metrics, labelled with what runs. */
export const serviceMetrics = (contract: OpenApiDocument, backend = 'unknown'): Metrics =>
  createMetrics({
    contract,
    basePath,
    build: { version: serverVersion, contract: interfaceVersion, backend },
  });

export async function createApp(deps: AppDeps): Promise<Express> {
  const { store, logger } = deps;
  const contract = deps.contract ?? loadContract();
  const cursors = createCursors(await store.setting('cursor_secret', () => randomBytes(32).toString('hex')));
  const onViolation =
    deps.onContractViolation ??
    ((violation: ContractViolation) => logger.error({ violation }, 'response breaks the contract'));

  // Values judged against the contract's schemas before they are committed or sent (validation.ts).
  const checks = schemaChecks(contract, onViolation);
  const metrics = deps.metrics ?? serviceMetrics(contract, deps.backend);

  const app = express();
  app.disable('x-powered-by');
  if (deps.trustProxy !== undefined) app.set('trust proxy', deps.trustProxy);
  app.disable('etag'); // every /v1 response carries fresh rate-limit headers: nothing to revalidate (and it costs)
  app.use(requestLog(logger, documentedQuery(contract)));
  app.use(unsupportedExpectationOutside(basePath));
  app.get('/healthz', (_req, res) => {
    // Liveness only: the process answers; /readyz checks the store.
    res.json({ status: 'ok', version: serverVersion, contract: interfaceVersion });
  });
  app.get('/metrics', metricsEndpoint(metrics, deps.metricsToken));
  const health = deps.health ?? new StoreHealth(logger);
  app.get('/readyz', async (_req, res) => {
    if (health.unwritable) {
      // Requests found the store unable to write: ready again only when a write of our own succeeds.
      try {
        await store.check({ write: true });
        health.succeededWrite();
      } catch {
        sendError(res, storeUnavailable(new StoreUnwritableError(health.unwritable, 'still failing')));
        return;
      }
    }
    try {
      await store.check();
      // Degraded (e.g. Redis out: limits per instance) is still ready: every instance shares the cause,
      // and taking them all out of rotation would turn a degradation into an outage.
      const degraded = deps.degraded?.();
      res.json(degraded ? { status: 'degraded', reason: degraded } : { status: 'ready' });
    } catch (error) {
      logger.error(
        { failure: { type: (error as Error).name, message: (error as Error).message } },
        'store not ready',
      );
      sendError(res, storeUnavailable(new StoreUnavailableError('the store cannot be read')));
    }
  });
  app.get('/openapi.json', (_req, res) => {
    res.json(contract);
  });
  app.get('/docs', docsPage(docsPath));

  const v1 = Router();
  app.use(basePath, v1);
  if (deps.tracing) v1.use(serverSpans(operations(contract, basePath)));
  v1.use(parseQueryOnce);
  v1.use(metrics.observe);
  v1.use(function noteWrites(req, res, next) {
    // A pet created means the store takes writes again (ends an episode of a full disk, see StoreHealth).
    if (req.method === 'POST') res.once('finish', () => res.statusCode === 201 && health.succeededWrite());
    next();
  });
  v1.use(announceDeprecations);
  v1.use(identify(store.keys));
  v1.use(rateLimit(deps.limiter, logger, metrics, deps.usage));
  v1.use(unsupportedExpectation);
  if (deps.corsOrigins?.length) v1.use(corsFor(deps.corsOrigins, responseHeaders(contract)));
  v1.use(requireKey);
  v1.use(enforceSunsets);
  v1.use(decodablePath);
  v1.use(headAsGet);
  v1.use(plainQueryNames);
  v1.use(canonicalIntegers(integerQueryParameters(contract)));
  v1.use(jsonBody(requestBodyLimit));
  v1.use(contractValidator(contract, onViolation));
  v1.use(petRoutes(store.pets, cursors, checks, idempotency(store.idempotency)));
  app.use(notFound(basePath));
  app.use(errorHandler(logger, metrics.storeErrors, health, (req) => checks('Error', req)));
  return app;
}
