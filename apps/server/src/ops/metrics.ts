// Prometheus metrics (prom-client) for operators: requests and latency by the contract's operationId and
// status, rate-limit decisions by plan, bans started, store errors, admin changes, contract violations,
// whether the rate limits run on this instance's memory (a shared store out), build info, and Node's
// own process and event-loop metrics. Served at GET /metrics (outside /v1: never counted against the API), behind
// METRICS_TOKEN when it is set.
import type { NextFunction, Request, Response } from 'express';
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { planNames } from '../plans.js';
import { whenDone } from '../when-done.js';
import { clusterScrape } from './cluster-metrics.js';
import { requestMetrics } from './request-metrics.js';

const requestMetricNames = {
  requests: 'animal_store_http_requests_total',
  duration: 'animal_store_http_request_duration_seconds',
};
const requestMetricHelp = {
  requests: 'Requests under the base path, by the contract operationId and the response status',
  duration: 'Time from request to response, by operation and status',
};
const durationBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export type Metrics = {
  registry: Registry;
  /** The metrics in Prometheus's text format: this process's, or with WORKERS > 1 the cluster's. */
  scrape: () => Promise<string>;
  /** Times every request under the base path (mounted there, before everything else). */
  observe: (req: Request, res: Response, next: NextFunction) => void;
  decisions: Counter<'plan' | 'decision'>;
  bans: Counter<'plan'>;
  storeErrors: Counter<'reason'>;
  /** Changes made through the admin API, by operation (its audit log has one line for each). */
  adminChanges: Counter<'operation'>;
  /** Responses that broke their contract (each answered 500 and logged), by API: public or admin. */
  contractViolations: Counter<'api'>;
  /** Counts a listener's open connections against its cap (MAX_CONNECTIONS), at each scrape. */
  watchConnections(listener: string, open: () => number, max: number): void;
};

/** What the gauges read at each scrape (createMetrics' options). */
type ScrapeSources = {
  /** Why the rate limits run on this instance's memory now (a shared store out), or undefined. */
  degraded?: (() => string | undefined) | undefined;
  /** Whether the store answers now, as /readyz asks it (at each scrape). */
  ready?: (() => Promise<boolean>) | undefined;
  /** Store calls waiting for a connection now (at each scrape). */
  waiting?: (() => number) | undefined;
};

/** The counters requests and operators' changes move. */
function counters(registers: Registry[]) {
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Counter<L>({ name, help, labelNames, registers });
  const bans = counter('animal_store_bans_started_total', 'Temporary bans started, by plan', ['plan']);
  // Every plan's series from the start, at 0: increase() sees a plan's first bans after a start only from
  // a sample before them (a series born at 12 read as 2.06, and the ban alert never fired).
  for (const plan of planNames) bans.inc({ plan }, 0);
  return {
    decisions: counter(
      'animal_store_rate_limit_decisions_total',
      'Rate-limit decisions: admitted, limited or banned, by plan (anonymous: no valid key)',
      ['plan', 'decision'],
    ),
    bans,
    storeErrors: counter(
      'animal_store_store_errors_total',
      'Requests answered 503 because the store (or the counters) could not be reached (unavailable) or written (disk_full, read_only)',
      ['reason'],
    ),
    adminChanges: counter(
      'animal_store_admin_changes_total',
      'Changes made through the admin API (each also logged as an audit record), by operation',
      ['operation'],
    ),
    contractViolations: counter(
      'animal_store_contract_violations_total',
      'Responses that broke their contract (answered 500 instead, and logged), by API: public or admin',
      ['api'],
    ),
  };
}

/** The gauges of the instance's state, each read at each scrape. */
function stateGauges(
  registers: Registry[],
  { degraded, ready, waiting }: ScrapeSources,
  connectionCounts: Map<string, { open: () => number; max: number }>,
): void {
  if (ready) {
    new Gauge({
      name: 'animal_store_ready',
      help: 'Whether the store answers, as /readyz asks it (1 ready, 0 not), at each scrape',
      registers,
      aggregator: 'min', // with WORKERS: 0 when any process finds it unready
      async collect() {
        this.set((await ready()) ? 1 : 0);
      },
    });
  }
  new Gauge({
    name: 'animal_store_rate_limits_per_instance',
    help: "1 while this process's rate limits run on its own memory because the shared store (Redis) is out: limits per instance, not shared; 0 while shared",
    registers,
    aggregator: 'sum', // with WORKERS: how many of the instance's processes run on their own
    collect() {
      this.set(degraded?.() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'animal_store_store_waiting',
    help: "Store calls waiting for a connection now (PostgreSQL's pool full: raise DATABASE_POOL_SIZE, or the database is slow), at each scrape",
    registers,
    aggregator: 'sum',
    collect() {
      this.set(waiting?.() ?? 0);
    },
  });
  new Gauge({
    name: 'animal_store_http_connections',
    help: 'Open client connections, by listener (public, admin), at each scrape',
    labelNames: ['listener'] as const,
    registers,
    aggregator: 'sum',
    collect() {
      for (const [listener, { open }] of connectionCounts) this.set({ listener }, open());
    },
  });
  new Gauge({
    name: 'animal_store_http_connections_max',
    help: 'The most client connections a listener holds (MAX_CONNECTIONS; new ones past it are closed), by listener',
    labelNames: ['listener'] as const,
    registers,
    aggregator: 'sum', // with WORKERS: each process holds its own
    collect() {
      for (const [listener, { max }] of connectionCounts) this.set({ listener }, max);
    },
  });
}

export function createMetrics(
  options: { build: { version: string; contract: string; backend: string } } & ScrapeSources,
): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry }); // process CPU/memory, event-loop lag, GC
  const registers = [registry];
  const tally = requestMetrics(registry, requestMetricNames, requestMetricHelp, durationBuckets);
  const connectionCounts = new Map<string, { open: () => number; max: number }>();
  stateGauges(registers, options, connectionCounts);
  new Gauge({
    name: 'animal_store_build_info',
    help: 'The running service: its version, the contract version it serves, and its backend',
    labelNames: ['version', 'contract', 'backend'],
    registers,
    aggregator: 'first', // every worker runs the same build: one sample, not one per worker
  }).set(options.build, 1);

  const observe = (_req: Request, res: Response, next: NextFunction) => {
    const started = performance.now();
    whenDone(res, (answered) => {
      if (!answered) return; // the client left (when-done.ts): not a response
      tally.record(res.locals.operation?.id ?? 'other', res.statusCode, (performance.now() - started) / 1000);
    });
    next();
  };
  return {
    registry,
    scrape: clusterScrape(registry),
    observe,
    ...counters(registers),
    watchConnections: (listener, open, max) => void connectionCounts.set(listener, { open, max }),
  };
}
