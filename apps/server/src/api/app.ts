// createApp: the public API's wiring, no listen, in the shell both apps share (http/contract-app.ts).
// Outside the base path: liveness, readiness, metrics, the contract and its docs. Under it, the chain
// below, in its order (docs/architecture.md shows it, and a test holds the two together): the request's
// key, its rate limit, CORS, the request's shape, the contract's validation (requests and responses),
// the handlers (pets/routes.ts, idempotency on createPet).
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { interfaceVersion, requestBodyLimit } from '@animal-store/spec';
import type { Express, RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { TrustProxy } from '../config.js';
import {
  basePath,
  integerQueryParameters,
  loadContract,
  type OpenApiDocument,
  responseHeaders,
} from '../contract.js';
import { canonicalIntegers } from '../http/canonical-integers.js';
import { contractApp } from '../http/contract-app.js';
import { decodablePath } from '../http/decodable-path.js';
import { storeUnavailable } from '../http/errors.js';
import { unsupportedExpectation, unsupportedExpectationOutside } from '../http/expectation.js';
import { headAsGet } from '../http/head-as-get.js';
import { answers, sendError } from '../http/http-error.js';
import { jsonBody } from '../http/json-body.js';
import { parseQueryOnce, plainQueryNames } from '../http/plain-query-names.js';
import { resolveOperation } from '../http/resolve-operation.js';
import { shuttingDown } from '../http/shutting-down.js';
import {
  type ContractViolation,
  contractValidator,
  countedViolations,
  schemaChecks,
} from '../http/validation.js';
import type { RateLimiter } from '../limits/policy.js';
import { createMetrics, type Metrics } from '../ops/metrics.js';
import { StoreHealth } from '../ops/store-health.js';
import type { Store } from '../store/store.js';
import { StoreUnavailableError, StoreUnwritableError } from '../store/unavailable.js';
import { serverSpans } from '../tracing/spans.js';
import { serverVersion } from '../version.js';
import { whenDone } from '../when-done.js';
import { corsFor } from './cors.js';
import { announceDeprecations, enforceSunsets } from './deprecation.js';
import { identify, requireKey } from './identify.js';
import { metricsEndpoint } from './metrics-endpoint.js';
import { createCursors } from './pets/cursor.js';
import { petRoutes } from './pets/routes.js';
import { rateLimit, type UsageRecorder } from './rate-limit.js';

/** The API reference, rendered from the contract by `redocly build-docs` at build time (see package.json). */
const docsPath = fileURLToPath(new URL('../../dist/docs.html', import.meta.url)); // from src/api/ or dist/api/

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
export const serviceMetrics = (
  backend = 'unknown',
  status: {
    degraded?: () => string | undefined;
    ready?: () => Promise<boolean>;
    waiting?: () => number;
  } = {},
): Metrics =>
  createMetrics({ build: { version: serverVersion, contract: interfaceVersion, backend }, ...status });

export async function createApp(deps: AppDeps): Promise<Express> {
  const { store, logger } = deps;
  const contract = deps.contract ?? loadContract();
  const cursors = createCursors(await store.setting('cursor_secret', () => randomBytes(32).toString('hex')));
  const metrics = deps.metrics ?? serviceMetrics(deps.backend, { degraded: deps.degraded });
  const onViolation = countedViolations(
    metrics.contractViolations,
    'public',
    deps.onContractViolation ??
      ((violation: ContractViolation) => logger.error({ violation }, 'response breaks the contract')),
  );

  // Values judged against the contract's schemas before they are committed or sent (validation.ts).
  const checks = schemaChecks(contract, onViolation);

  const health = deps.health ?? new StoreHealth(logger);
  return contractApp({
    logger,
    contract,
    basePath,
    docsPath,
    trustProxy: deps.trustProxy,
    checks,
    storeErrors: metrics.storeErrors,
    health,
    outside(app) {
      app.use(unsupportedExpectationOutside(basePath));
      app.get('/healthz', (_req, res) => {
        // Liveness only: the process answers; /readyz checks the store.
        res.json({ status: 'ok', version: serverVersion, contract: interfaceVersion });
      });
      app.get('/metrics', metricsEndpoint(metrics, deps.metricsToken));
      app.get('/readyz', readiness(store, health, logger, deps.degraded));
    },
    chain: [
      resolveOperation(contract, basePath),
      ...(deps.tracing ? [serverSpans] : []),
      parseQueryOnce,
      metrics.observe,
      function noteWrites(req, res, next) {
        // A pet created means the store takes writes again (ends an episode of a full disk, see StoreHealth).
        if (req.method === 'POST')
          whenDone(res, (answered) => answered && res.statusCode === 201 && health.succeededWrite());
        next();
      },
      announceDeprecations,
      identify(store.keys),
      rateLimit(deps.limiter, logger, metrics, deps.usage),
      unsupportedExpectation,
      ...(deps.corsOrigins?.length ? [corsFor(deps.corsOrigins, responseHeaders(contract))] : []),
      requireKey,
      enforceSunsets,
      decodablePath,
      headAsGet,
      plainQueryNames,
      canonicalIntegers(integerQueryParameters(contract)),
      jsonBody(requestBodyLimit),
      contractValidator(contract, onViolation),
      petRoutes(store.pets, cursors, checks, store.idempotency),
    ],
  });
}

/**
 * GET /readyz: 200 when the store answers (`degraded` with the reason when the service runs degraded), 503
 * when it does not, when requests found it unable to write and a write of our own still fails, or from
 * the shutdown signal on (shutting-down.ts).
 */
function readiness(
  store: Store,
  health: StoreHealth,
  logger: Logger,
  degraded: AppDeps['degraded'],
): RequestHandler {
  return async function readiness(req, res) {
    if (shuttingDown(req)) return sendError(res, answers.shuttingDown());
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
      const reason = degraded?.();
      res.json(reason ? { status: 'degraded', reason } : { status: 'ready' });
    } catch (error) {
      logger.error(
        { failure: { type: (error as Error).name, message: (error as Error).message } },
        'store not ready',
      );
      sendError(res, storeUnavailable(new StoreUnavailableError('the store cannot be read')));
    }
  };
}
