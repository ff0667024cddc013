// The composition root, one for the process entry (main.ts) and the test harness: from the configuration
// and the opened engines, the limiter, the usage meter, the metrics, the record of whether the store takes
// writes, the public app and (with ADMIN_PORT) the admin app, all sharing them; each part registers its
// stop as it is made (stops.ts). Listening is the caller's (a port from the environment, or any).
import type { Express } from 'express';
import type { Logger } from 'pino';
import { createAdminApp } from './admin/app.js';
import { pruneAuditEvents } from './admin/audit.js';
import { createApp, serviceMetrics } from './api/app.js';
import type { Config } from './config.js';
import { loadContract, type OpenApiDocument } from './contract.js';
import type { ContractViolation } from './http/validation.js';
import { createRateLimiter, type RateLimiter } from './limits/policy.js';
import type { Metrics } from './ops/metrics.js';
import { StoreHealth } from './ops/store-health.js';
import { Stops } from './stops.js';
import type { Backend } from './store/open.js';
import { traced, tracingOn } from './tracing/spans.js';
import { UsageMeter } from './usage/meter.js';

export type Service = {
  app: Express;
  /** The admin API's app when the configuration has one (ADMIN_PORT), else undefined. */
  adminApp: Express | undefined;
  limiter: RateLimiter;
  meter: UsageMeter;
  metrics: Metrics;
  /** Stops what was composed (after the listeners have drained), each part in its registered order. */
  stop(): Promise<void>;
};

/** What tests may swap: a stricter contract, and where contract violations go (logged by default). */
export type ServiceHooks = {
  contract?: OpenApiDocument;
  onContractViolation?: (violation: ContractViolation) => void;
};

export async function composeService(
  config: Config,
  backend: Backend,
  logger: Logger,
  hooks: ServiceHooks = {},
): Promise<Service> {
  // With tracing on: a span for each SQLite store call and each counters call (PostgreSQL and Redis
  // have their instrumentations); with it off, the engines as they are.
  const tracing = tracingOn();
  const store =
    tracing && backend.name === 'sqlite'
      ? {
          ...backend.store,
          pets: traced(backend.store.pets, 'sqlite.pets'),
          keys: traced(backend.store.keys, 'sqlite.keys'),
          idempotency: traced(backend.store.idempotency, 'sqlite.idempotency'),
          usage: traced(backend.store.usage, 'sqlite.usage'),
          audit: traced(backend.store.audit, 'sqlite.audit'),
        }
      : backend.store;
  const counters = tracing ? traced(backend.counters, 'counters') : backend.counters;
  // Each part's stop registered as it is made, run in the reverse order (stops.ts): the usage counted
  // since the last write, then the unused leases back to the shared store, then the engines.
  const stops = new Stops();
  stops.onStop(() => backend.close());
  const limiter = createRateLimiter(counters, config.limits);
  stops.onStop(() => limiter.close());
  const meter = new UsageMeter(store.usage, logger, { retentionDays: config.usageRetentionDays });
  stops.onStop(() => meter.close());
  const contract = hooks.contract ?? loadContract(); // read once: the app enforces it, the metrics name its operations
  const metrics = serviceMetrics(backend.name, {
    degraded: backend.degraded,
    waiting: backend.waiting,
    ready: () =>
      store.check().then(
        () => true,
        () => false,
      ),
  });
  const health = new StoreHealth(logger); // one for both apps: /readyz sees an admin write that failed
  const app = await createApp({
    contract,
    store,
    limiter,
    logger,
    usage: meter,
    metrics,
    health,
    trustProxy: config.trustProxy,
    corsOrigins: config.corsOrigins,
    backend: backend.name,
    metricsToken: config.metricsToken,
    degraded: backend.degraded,
    tracing,
    ...(hooks.onContractViolation && { onContractViolation: hooks.onContractViolation }),
  });
  if (config.admin) stops.onStop(pruneAuditEvents(store.audit, config.auditRetentionDays));
  const adminApp =
    config.admin &&
    createAdminApp({
      store,
      limiter,
      meter,
      logger,
      tokens: config.admin.tokens,
      perMinute: config.admin.perMinute,
      metrics,
      health,
      tracing,
      ...(hooks.onContractViolation && { onContractViolation: hooks.onContractViolation }),
    });
  return {
    app,
    adminApp,
    limiter,
    meter,
    metrics,
    stop: () => stops.stop(),
  };
}
