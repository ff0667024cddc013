// The OTLP exporter when its collector fails (down, refusing, silent) and its metrics when asked: the
// built server with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a collector of this test. The store plays no
// part in what is asserted (engine-faults/tracing.test.ts follows the store's spans on every engine), so
// on SQLite only.
import { once } from 'node:events';
import { createServer } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { createKey, enterprise } from '@animal-store/test-support';
import { describe, expect, it } from 'vitest';
import { freshStore } from '../support/backends.js';
import { call, logLines, processesStoppedAfterEach, serverDist } from '../support/harness.js';
import { heldWithin } from '../support/waits.js';

const start = processesStoppedAfterEach();

describe('the OTLP exporter', () => {
  it.each([
    ['down (nothing listens)', 'down'],
    ['answering 503', 'refusing'],
  ] as const)(
    'with the collector %s: failed exports are logged once a minute at most, and SIGTERM exits 0 within the bound, with one warning and no stack trace',
    async (_, collector) => {
      const store = await freshStore();
      const key = (await createKey(serverDist, { ...store }, ...enterprise(10_000, 100_000))).key;
      // A receiver that refuses every export (and notes what was sent to it), or a port nothing listens on.
      const paths: string[] = [];
      const refusing = createServer((req, res) => {
        paths.push(req.url ?? '');
        req.resume();
        res.writeHead(503).end();
      });
      refusing.listen(0, '127.0.0.1');
      await once(refusing, 'listening');
      const { port } = refusing.address() as AddressInfo;
      if (collector === 'down') await new Promise((r) => refusing.close(r));
      try {
        // Traced to the collector, its exports failing fast (1 s), stopping within 2 s and 1 s more.
        const traced = {
          ...store,
          NODE_ENV: 'production',
          SHUTDOWN_GRACE_SECONDS: '2',
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
        };
        const server = await start({ ...traced, OTEL_BSP_SCHEDULE_DELAY: '100' });
        const warnings = (msg: string) => logLines(server, msg);
        const warned = async () => {
          expect((await call(`${server.url}/v1/pets`, key)).status).toBe(200);
          return warnings('traces: the collector could not be reached').length > 0;
        };
        await heldWithin(warned, { timeout: 8_000, interval: 200 }); // every answer 200 meanwhile
        // More failed batches, still the one line (the next one would come a minute later).
        for (let i = 0; i < 5; i++) {
          await call(`${server.url}/v1/pets`, key);
          await new Promise((r) => setTimeout(r, 200));
        }
        expect(warnings('traces: the collector could not be reached')).toHaveLength(1);
        const stopping = performance.now();
        expect(await server.stop()).toBe(0);
        expect(performance.now() - stopping).toBeLessThan(3_000); // SHUTDOWN_GRACE_SECONDS + 1 s
        expect(server.output()).toContain('"msg":"stopped"');
        expect(server.output()).not.toMatch(/\n\s+at |stack/); // no stack trace, logged or thrown
        expect(server.output()).not.toContain('Redis unreachable'); // a clean stop is no outage

        // A span still to send at the stop: with a batch held for a minute, the stop's flush is the one
        // that sends it (with 100 ms, a stop slower than that on a busy machine found nothing left to send).
        const holding = await start({ ...traced, OTEL_BSP_SCHEDULE_DELAY: '60000' });
        expect((await call(`${holding.url}/v1/pets`, key)).status).toBe(200);
        const stoppingHolding = performance.now();
        expect(await holding.stop()).toBe(0);
        expect(performance.now() - stoppingHolding).toBeLessThan(3_000);
        expect(logLines(holding, 'traces: the last spans could not be sent')).toHaveLength(1);
        expect(holding.output()).toContain('"msg":"stopped"');
        expect(holding.output()).not.toMatch(/\n\s+at |stack/);
        if (collector === 'refusing') {
          expect(paths.length).toBeGreaterThan(0);
          expect(paths.filter((p) => p !== '/v1/traces')).toEqual([]); // traces only: no OTLP metrics or logs
        }
      } finally {
        refusing.close();
      }
    },
  );

  it('with a collector that accepts and never answers, SIGTERM still exits 0 within the bound: the last spans get what the bound leaves', async () => {
    const store = await freshStore();
    const key = (await createKey(serverDist, { ...store }, ...enterprise(10_000, 100_000))).key;
    const held: Socket[] = [];
    const silent = createNetServer((socket) => held.push(socket)); // reads nothing, answers nothing
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const { port } = silent.address() as AddressInfo;
    try {
      const server = await start({
        ...store,
        NODE_ENV: 'production',
        SHUTDOWN_GRACE_SECONDS: '2',
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, // the exporter's own timeout: 10 s
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      });
      for (let i = 0; i < 5; i++) expect((await call(`${server.url}/v1/pets`, key)).status).toBe(200);
      const stopping = performance.now();
      expect(await server.stop()).toBe(0);
      expect(performance.now() - stopping).toBeLessThan(3_000); // SHUTDOWN_GRACE_SECONDS + 1 s
      expect(server.output()).toContain('"msg":"stopped"');
    } finally {
      for (const socket of held) socket.destroy();
      silent.close();
    }
  });

  it('OTLP metrics are sent when OTEL_METRICS_EXPORTER asks for them', async () => {
    const store = await freshStore();
    const paths: string[] = [];
    const collector = createServer((req, res) => {
      paths.push(req.url ?? '');
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    collector.listen(0, '127.0.0.1');
    await once(collector, 'listening');
    try {
      const { port } = collector.address() as AddressInfo;
      const server = await start({
        ...store,
        NODE_ENV: 'production',
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_METRICS_EXPORTER: 'otlp',
      });
      await call(`${server.url}/v1/pets`, undefined);
      expect(await server.stop()).toBe(0); // the meter's last reading is sent at the stop
      expect(paths).toContain('/v1/metrics');
    } finally {
      collector.close();
    }
  });
});
