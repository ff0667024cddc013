// WORKERS > 1: this process is the cluster's primary (node:cluster). It forks the workers (each the
// whole service with its own store connection; they share the port, and the limits stay exact because
// the counters live in the shared store), replaces a worker that dies, makes the development key once,
// prints the readiness line when every worker listens, and on SIGTERM/SIGINT drains them all.
import cluster, { type Worker } from 'node:cluster';
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { stopOnSignals } from './lifecycle.js';
import { answerClusterScrapes } from './ops/cluster-metrics.js';

export type WorkerMessage = { listening: string; adminUrl?: string | undefined };

/** A port free on `host` now (the system's choice), for the workers to share. */
async function freePort(host: string): Promise<number> {
  const probe = createServer();
  probe.listen(0, host);
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

export async function runPrimary(
  config: Config,
  logger: Logger,
  ready: (url: string, adminUrl?: string) => Promise<void>,
): Promise<void> {
  answerClusterScrapes(); // a worker's /metrics asks for every worker's
  // Every worker takes the port itself (lifecycle.ts: SO_REUSEPORT), so "any free port" (0) is chosen
  // here, once, for all of them and the workers that replace them.
  const ports = {
    PORT: String(config.port || (await freePort(config.host))),
    ...(config.admin && { ADMIN_PORT: String(config.admin.port || (await freePort(config.admin.host))) }),
  };
  const listening = new Set<number>();
  let everReady = false;
  let stopping = false;
  const fork = (): Worker => {
    const worker = cluster.fork(ports);
    logger.info({ workerPid: worker.process.pid }, 'worker started');
    worker.on('message', async (message: WorkerMessage) => {
      if (!message?.listening) return;
      listening.add(worker.id);
      if (!everReady && listening.size === config.workers) {
        everReady = true;
        await ready(message.listening, message.adminUrl);
      }
    });
    return worker;
  };
  cluster.on('exit', (worker, code, signal) => {
    listening.delete(worker.id);
    if (stopping) return;
    if (!everReady) {
      // A worker that cannot start (its one-line reason is printed): the others would fail alike.
      stopping = true;
      for (const other of Object.values(cluster.workers ?? {})) other?.process.kill('SIGTERM');
      process.exit(code || 1);
    }
    logger.error({ workerPid: worker.process.pid, code, signal }, 'worker died; starting another');
    fork();
  });
  for (let i = 0; i < config.workers; i++) fork();

  // Each worker bounds its own drain (SHUTDOWN_GRACE_SECONDS + 1 s); this bound comes after theirs.
  stopOnSignals(logger, config.shutdownGraceMs + 2_000, async (signal) => {
    stopping = true;
    logger.info({ signal }, 'shutting down: draining every worker');
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    await Promise.all(
      workers.map(async (w) => {
        const exited = once(w, 'exit');
        w.process.kill('SIGTERM');
        await exited;
      }),
    );
  });
}
