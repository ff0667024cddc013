#!/usr/bin/env node
// The process entry: configuration → database → app → listen; SIGTERM/SIGINT drain and close.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createApp } from './app.js';
import { type Config, ConfigError, loadConfig } from './config.js';
import { openDatabase } from './store/database.js';
import { createKeyStore } from './store/keys.js';

function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
}

const config = configOrExit();
const logger = pino({ level: config.logLevel });
const db = openDatabase(config.databasePath);

const keys = createKeyStore(db);
if (!config.production && keys.isEmpty()) {
  // First start outside production: one free-plan key so that the quick start can call the service.
  // Printed once, on purpose, to the terminal; it never goes through the logger.
  const { key } = keys.create({ plan: 'free', label: 'development' });
  process.stdout.write(`\nDevelopment API key (free plan), shown once:\n\n  ${key}\n\n`);
}

const server = createApp({ db, logger, limits: config.limits, trustProxy: config.trustProxy }).listen(
  config.port,
  config.host,
);
await once(server, 'listening');
const { address, port } = server.address() as AddressInfo;
logger.info({ url: `http://${address}:${port}`, database: config.databasePath }, 'listening');

async function shutdown(signal: string) {
  logger.info({ signal }, 'shutting down: finishing in-flight requests');
  const closed = once(server, 'close');
  server.close(); // stop accepting; in-flight requests finish
  server.closeIdleConnections();
  const grace = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs);
  await closed;
  clearTimeout(grace);
  db.close();
  logger.info('stopped');
  process.exit(0);
}
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
