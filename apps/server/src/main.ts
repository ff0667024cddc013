// The process entry: configuration → store → app → listen; SIGTERM/SIGINT drain and close. Every start-up
// failure is one line on stderr that names the variable and says what to do, and exit status 1 (2 for
// configuration); never a stack trace. With WORKERS > 1 this process is the primary of a cluster (see
// primary.ts) and each worker runs the rest of this file.
import './env-file.js';
import cluster from 'node:cluster';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { interfaceVersion } from '@animal-store/spec';
import { Command } from 'commander';
import { pino } from 'pino';
import { createApp } from './app.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { createRateLimiter } from './limits/policy.js';
import { runPrimary, type WorkerMessage } from './primary.js';
import { createServer, drain } from './server.js';
import { type Backend, openBackend } from './store/open.js';
import { StoreOpenError } from './store/open-error.js';
import type { Store } from './store/store.js';
import { serverVersion } from './version.js';

// Output must never take the process down or hold it: with its reader gone (`main.js | head`), writes fail
// with EPIPE and are dropped. (The logger's own stream already drops them; this covers the key banner.)
process.stdout.on('error', () => {});

// --help and --version answer without side effects: no store is opened, no key is made.
new Command('animal-store-server')
  .description(
    'Runs the Animal Store HTTP service. Configuration comes from the environment (and .env in the working\n' +
      'directory, which never overrides it): PORT, HOST, DATABASE_URL, REDIS_URL, ... (see the README).',
  )
  .version(serverVersion)
  .parse();

function fail(message: string, status: number): never {
  process.stderr.write(`${message}\n`);
  process.exit(status);
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  fail(error.message, 2);
}

const logger = pino({ level: config.logLevel });
/** The readiness line (documented): one JSON record with msg "listening" and the url, at every level but silent. */
const announce = (url: string, backendName: string) =>
  (config.logLevel === 'silent' ? logger : logger.child({}, { level: 'info' })).info(
    {
      url,
      backend: backendName,
      version: serverVersion,
      contract: interfaceVersion,
      workers: config.workers,
      limits: config.limits,
    },
    'listening',
  );

/** The development key's limits: far above what a first client loop sends, so it is never banned by accident. */
const developmentQuota = { perMinute: 6_000, perDay: 1_000_000 };

/**
 * Outside production: on the first start, one development key, printed once; on every later start, how to
 * make another. Printed to the terminal on purpose; it never goes through the logger.
 */
async function developmentKey(store: Store) {
  if (config.production) return;
  if (!(await store.keys.isEmpty())) {
    process.stdout.write('\nNeed an API key? pnpm keys create --plan free (README: API keys)\n\n');
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

if (config.workers > 1 && cluster.isPrimary) {
  await runPrimary(config, logger, async (url) => {
    const opened = await openBackend(config.database, undefined, logger);
    await developmentKey(opened.store);
    await opened.close();
    announce(url, `${config.database.engine}${config.redis ? '+redis' : ''}`);
  });
} else {
  await serve();
}

async function serve() {
  let backend: Backend;
  try {
    backend = await openBackend(config.database, config.redis, logger);
  } catch (error) {
    fail(error instanceof StoreOpenError ? error.message : `DATABASE_URL: ${(error as Error).message}`, 1);
  }
  const { store } = backend;
  const limiter = createRateLimiter(backend.counters, config.limits);

  const app = await createApp({
    store,
    limiter,
    logger,
    trustProxy: config.trustProxy,
    corsOrigins: config.corsOrigins,
    backend: backend.name,
    metricsToken: config.metricsToken,
    degraded: backend.degraded,
  });
  const server = createServer(app, config.connections, logger);
  server.listen(config.port, config.host);
  try {
    await once(server, 'listening');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = `${config.host}:${config.port}`;
    fail(
      code === 'EADDRINUSE'
        ? `PORT: ${where} is already in use; stop the process that holds it, or set PORT (0 picks a free one).`
        : `HOST/PORT: cannot listen on ${where} (${code}); check HOST and PORT.`,
      1,
    );
  }

  const { address, port } = server.address() as AddressInfo;
  const url = `http://${address}:${port}`;
  if (cluster.isWorker) {
    process.send?.({ listening: url } satisfies WorkerMessage); // the primary announces the cluster
  } else {
    // After listening, so that a start that fails never prints a key it then abandons.
    await developmentKey(store);
    announce(url, backend.name);
  }

  let stopping = false;
  async function shutdown(signal: string) {
    // Once: a second signal (the primary's, after the process group's) must not cut the drain short.
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    // A hard bound on the whole shutdown, whatever hangs (a store that does not close, a blocked output).
    setTimeout(() => process.exit(1), config.shutdownGraceMs + 1_000).unref();
    await drain(server, config.shutdownGraceMs);
    await limiter.close(); // unused leases go back to the shared store for the other instances
    await backend.close();
    logger.info('stopped');
    process.exit(0);
  }
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
