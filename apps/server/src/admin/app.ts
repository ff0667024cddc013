// createAdminApp: the admin API's own Express app, for its own listener (ADMIN_PORT), in the shell both
// apps share (http/contract-app.ts), every answer of the listener without caching or framing. Under the base
// path (`/admin/v1`), the chain below in its order: the admin token, its rate limit (token-limit.ts), the request's shape, the admin contract's validation
// (requests and responses), the operations (routes.ts, one file each under keys/). Outside it, the console
// at /console/ (console.ts). Nothing of the public API is mounted here, and nothing of this on the public app.
import { fileURLToPath } from 'node:url';
import { requestBodyLimit } from '@animal-store/spec';
import type { Express } from 'express';
import type { Logger } from 'pino';
import type { AdminToken } from '../config.js';
import { integerQueryParameters, loadAdminContract } from '../contract.js';
import { canonicalIntegers } from '../http/canonical-integers.js';
import { contractApp } from '../http/contract-app.js';
import { decodablePath } from '../http/decodable-path.js';
import { headAsGet } from '../http/head-as-get.js';
import { jsonBody } from '../http/json-body.js';
import { parseQueryOnce } from '../http/plain-query-names.js';
import { resolveOperation } from '../http/resolve-operation.js';
import {
  type ContractViolation,
  contractValidator,
  countedViolations,
  schemaChecks,
} from '../http/validation.js';
import type { Metrics } from '../ops/metrics.js';
import type { StoreHealth } from '../ops/store-health.js';
import { serverSpans } from '../tracing/spans.js';
import { auditTrail } from './audit.js';
import { serveConsole } from './console.js';
import { type AdminDeps, adminRoutes } from './routes.js';
import { limitAdminToken } from './token-limit.js';
import { requireAdminToken } from './tokens.js';

/** The admin API reference, rendered from the admin contract at build time (see package.json). */
const docsPath = fileURLToPath(new URL('../../dist/admin-docs.html', import.meta.url));

export type AdminAppDeps = Omit<AdminDeps, 'audit'> & {
  logger: Logger;
  /** ADMIN_TOKENS: every one is accepted, and named in the audit trail. */
  tokens: AdminToken[];
  /** Requests a minute per admin token (per instance). */
  perMinute: number;
  /** The service's metrics (audit records are counted there, and store errors). */
  metrics: Pick<Metrics, 'adminChanges' | 'storeErrors' | 'contractViolations'>;
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
  const onViolation = countedViolations(
    deps.metrics.contractViolations,
    'admin',
    deps.onContractViolation ??
      ((violation: ContractViolation) =>
        logger.error({ violation }, 'admin response breaks the admin contract')),
  );
  return contractApp({
    logger,
    contract,
    basePath,
    docsPath,
    checks: schemaChecks(contract, onViolation),
    storeErrors: deps.metrics.storeErrors,
    health: deps.health,
    outside: serveConsole,
    // Answers name keys and carry secrets: no cache keeps one, and no page frames one (its reference, its
    // contract and its 404s too; the console sets its own).
    headers: { 'Cache-Control': 'no-store', 'X-Frame-Options': 'DENY' },
    // The audit trail's request ids are the server's own: a client's X-Request-Id is not taken here.
    clientRequestIds: false,
    chain: [
      resolveOperation(contract, basePath),
      ...(deps.tracing ? [serverSpans] : []),
      parseQueryOnce,
      requireAdminToken(deps.tokens),
      limitAdminToken(deps.perMinute),
      decodablePath,
      headAsGet,
      canonicalIntegers(integerQueryParameters(contract)),
      jsonBody(requestBodyLimit),
      contractValidator(contract, onViolation),
      adminRoutes({ ...deps, audit: auditTrail(logger, deps.metrics, deps.store.audit) }),
    ],
  });
}
