// The service, as main.ts runs it: configuration → store → apps → listen; SIGTERM/SIGINT drain and close
// (lifecycle.ts).
// Every start-up failure is one line on stderr that names the variable and says what to do, and exit
// status 1 (2 for configuration); never a stack trace. With WORKERS > 1 this process is the primary of a
// cluster (see primary.ts) and each worker runs serve().
import cluster from 'node:cluster';
import { interfaceVersion } from '@animal-store/spec';
import { Command } from 'commander';
import { type Logger, pino } from 'pino';
import { composeService } from './compose.js';
import { type Config, loadConfig } from './config.js';
import { listen, StartError, startFailed, stopOnSignals } from './lifecycle.js';
import { jsonLogger } from './log-output.js';
import { healthcheck } from './ops/healthcheck.js';
import { runPrimary, type WorkerMessage } from './primary.js';
import { createServer, drain, openConnections } from './server.js';
import { Stops } from './stops.js';
import { type Backend, backendName, openBackend } from './store/open.js';
import { StoreOpenError } from './store/open-error.js';
import type { Store } from './store/store.js';
import { traceIds, tracingOn } from './tracing/spans.js';
import { serverVersion, withNode24 } from './version.js';

/** Runs the service: configuration → store → apps → listeners, or the cluster's primary; no module state. */
async function main(): Promise<void> {
  // Output must never take the process down or hold it: with its reader gone (`main.js | head`), writes
  // fail with EPIPE and are dropped. (The logger's own stream already drops them; this covers the key banner.)
  process.stdout.on('error', () => {});

  // --help, --version and --healthcheck answer without side effects: no store is opened, no key is made.
  const command = new Command('animal-store-server')
    .description(
      'Runs the Animal Store HTTP service. Configuration comes from the environment (and .env in the working\n' +
        'directory, which never overrides it): PORT, HOST, DATABASE_URL, REDIS_URL, ... (see the README).',
    )
    .version(serverVersion)
    .option(
      '--healthcheck',
      "asks this configuration's own /healthz (HOST, PORT) once: exit 0 when it answers 200, else 1",
    )
    .parse();

  const config = loadConfig();
  if (command.opts().healthcheck) process.exit(await healthcheck(config));
  const logger = await createLogger(config);
  if (tracingOn()) (await import('./tracing/start.js')).reportTo(logger); // a collector's failures
  if (config.workers > 1 && cluster.isPrimary) {
    await runPrimary(config, logger, async (url, adminUrl) => {
      const opened = await openBackend(config.database, undefined, logger);
      await developmentKey(config, opened.store);
      await opened.close();
      announce(config, logger, {
        url,
        adminUrl,
        backend: backendName(config.database, config.redis),
      });
    });
    return;
  }
  await serve(config, logger);
}

/**
 * On a terminal outside production, logs are for the person watching (pino-pretty, loaded only then);
 * piped, redirected or in production they are JSON lines for machines (and the readiness line is JSON).
 */
async function createLogger(config: Config): Promise<Logger> {
  // With tracing on, every line written inside a request carries its trace and span ids.
  const base = { level: config.logLevel, ...(tracingOn() && { mixin: traceIds }) };
  if (!process.stdout.isTTY || config.production) return jsonLogger(base);
  const { default: pretty } = await import('pino-pretty');
  return pino(base, pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', sync: true }));
}

/**
 * The readiness line (documented): one JSON record with msg "listening", the url and, with the admin API,
 * its adminUrl; at every level but silent.
 */
function announce(
  config: Config,
  logger: Logger,
  ready: { url: string; adminUrl?: string | undefined; backend: string },
): void {
  (config.logLevel === 'silent' ? logger : logger.child({}, { level: 'info' })).info(
    {
      url: ready.url,
      ...(ready.adminUrl && { adminUrl: ready.adminUrl }),
      backend: ready.backend,
      version: serverVersion,
      contract: interfaceVersion,
      node: process.version,
      workers: config.workers,
      limits: config.limits,
    },
    'listening',
  );
}

/** The development key's limits: far above what a first client loop sends, so it is never banned by accident. */
const developmentQuota = { perMinute: 6_000, perDay: 1_000_000 };

/**
 * Outside production: on the first start, one development key, printed once; on every later start, how to
 * make another. Printed to the terminal on purpose; it never goes through the logger.
 */
async function developmentKey(config: Config, store: Store): Promise<void> {
  if (config.production) return;
  if (!(await store.keys.isEmpty())) {
    const create = withNode24('pnpm keys create --plan free');
    process.stdout.write(`\nNeed an API key? ${create} (README: API keys)\n\n`);
    return;
  }
  const { key } = await store.keys.create({
    plan: 'enterprise',
    quota: developmentQuota,
    label: 'development',
  });
  process.stdout.write(
    `\nDevelopment API key (${developmentQuota.perMinute.toLocaleString('en')} requests a minute, ${developmentQuota.perDay.toLocaleString('en')} a day), shown once:\n\n  ${key}\n\n`,
  );
}

/** One serving process (the only one, or a worker): the store, the limiter, the meter, the two listeners. */
async function serve(config: Config, logger: Logger): Promise<void> {
  let backend: Backend;
  try {
    backend = await openBackend(config.database, config.redis, logger);
  } catch (error) {
    if (error instanceof StoreOpenError) throw error;
    throw new StartError('DATABASE_URL', (error as Error).message);
  }
  // Each part's stop registered where it is made, run last-made first (stops.ts): the listeners drain,
  // then what was composed stops, then the last spans go.
  const stops = new Stops();
  // Before the readiness line, so that a SIGTERM sent the moment it is read drains and exits 0 (installed
  // after it, one sent at once killed the process: 12 of 20 tries); a signal during the start stops what
  // has been made so far.
  stopOnSignals(logger, config.shutdownGraceMs + 1_000, async (signal, remainingMs) => {
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    await stops.stop(remainingMs);
  });
  if (tracingOn()) {
    const { stopTracing } = await import('./tracing/start.js');
    // The last spans, in what is left of the bound but for half a second to log and exit (a quarter was
    // not enough on a loaded machine: the exit was seen 3,021 ms after a SIGTERM bounded at 3,000).
    stops.onStop((remainingMs) => stopTracing(remainingMs() - 500));
  }
  const service = await composeService(config, backend, logger);
  stops.onStop(service.stop);
  const server = createServer(service.app, config.connections, logger);
  const url = await listen(server, config, { port: 'PORT', host: 'HOST' });
  const admin = config.admin;
  const adminServer = service.adminApp && createServer(service.adminApp, config.connections, logger);
  const adminUrl =
    admin && adminServer && (await listen(adminServer, admin, { port: 'ADMIN_PORT', host: 'ADMIN_HOST' }));
  const { maxConnections } = config.connections;
  service.metrics.watchConnections('public', () => openConnections(server), maxConnections);
  if (adminServer)
    service.metrics.watchConnections('admin', () => openConnections(adminServer), maxConnections);
  if (cluster.isWorker) {
    process.send?.({ listening: url, adminUrl } satisfies WorkerMessage); // the primary announces the cluster
  } else {
    // After listening, so that a start that fails never prints a key it then abandons.
    await developmentKey(config, backend.store);
    announce(config, logger, { url, adminUrl, backend: backend.name });
  }

  stops.onStop(() =>
    Promise.all([
      drain(server, config.shutdownGraceMs),
      adminServer && drain(adminServer, config.shutdownGraceMs),
    ]),
  );
}

try {
  await main();
} catch (error) {
  startFailed(error);
}
