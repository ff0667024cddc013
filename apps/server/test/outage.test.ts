// Backend outages, for real: PostgreSQL cut off mid-run (a TCP relay between the service and the real
// server is closed, then reopened on the same port), and a private redis-server killed and restarted.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort, requireTool } from '@animal-store/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { backend, postgresUrl } from './backends.js';
import { call, expectServiceUnavailable, freshStore, startServer, type TestServer } from './harness.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A TCP relay to host:port that can be cut (every connection dropped, port closed) and restored. */
async function relay(host: string, port: number) {
  const sockets = new Set<Socket>();
  let listener: Server;
  const open = async (at = 0) => {
    listener = createServer((client) => {
      const upstream = connect(port, host);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
    });
    listener.listen(at, '127.0.0.1');
    await once(listener, 'listening');
    return (listener.address() as { port: number }).port;
  };
  const relayPort = await open();
  return {
    port: relayPort,
    async cut() {
      listener.close();
      for (const s of sockets) s.destroy();
    },
    restore: () => open(relayPort),
  };
}

describe.runIf(backend === 'postgres')('PostgreSQL unreachable', () => {
  it('answers 503 service_unavailable with Retry-After and /readyz 503, then recovers without a restart', async () => {
    const store = await freshStore();
    const target = new URL(postgresUrl);
    const pg = await relay(target.hostname, Number(target.port || 5432));
    cleanups.push(() => pg.cut());
    const through = new URL(store.DATABASE_URL);
    through.port = String(pg.port);
    const server: TestServer = await startServer({ store: { DATABASE_URL: through.toString() } });
    cleanups.push(() => server.close().catch(() => {}));
    const key = await server.key({ perMinute: 1000, perDay: 10_000 });
    expect((await call(`${server.url}/v1/pets`, key)).status).toBe(200);

    await pg.cut();
    for (const request of [
      () => call(`${server.url}/v1/pets`, key),
      () =>
        call(`${server.url}/v1/pets`, key, {
          method: 'POST',
          body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
        }),
    ]) {
      const res = await request();
      await expectServiceUnavailable(res);
    }
    expect((await fetch(`${server.url}/readyz`)).status).toBe(503);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

    await pg.restore();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await call(`${server.url}/v1/pets`, key)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    const created = await call(`${server.url}/v1/pets`, key, {
      method: 'POST',
      body: JSON.stringify({ name: 'Back', categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    server.expectNoContractViolations();
  });
});

describe.runIf(backend === 'postgres+redis')('Redis unreachable', () => {
  it('keeps serving on per-instance limits, says so in the log, and shares limits again when Redis returns', async () => {
    const redisServer = requireTool('redis-server', 'redis-server');
    const port = await freePort();
    const startRedis = async () => {
      const child = spawn(
        redisServer,
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        {
          stdio: 'ignore',
        },
      );
      for (let i = 0; i < 50; i++) {
        const up = await new Promise<boolean>((resolve) => {
          const s = connect(port, '127.0.0.1');
          s.once('connect', () => {
            s.destroy();
            resolve(true);
          });
          s.once('error', () => resolve(false));
        });
        if (up) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      return child;
    };
    let redis = await startRedis();
    cleanups.push(() => redis.kill('SIGKILL'));
    const store = { ...(await freshStore()), REDIS_URL: `redis://127.0.0.1:${port}` };
    const server = await startServer({ store });
    cleanups.push(() => server.close());
    const key = await server.key({ perMinute: 3, perDay: 100 });
    expect((await call(`${server.url}/v1/pets`, key)).headers.get('x-ratelimit-remaining')).toBe('2');

    redis.kill('SIGKILL');
    await once(redis, 'exit');
    const during = [];
    for (let i = 0; i < 5; i++) during.push((await call(`${server.url}/v1/pets`, key)).status);
    expect(during).toEqual([200, 200, 200, 429, 429]); // limited still, by this instance's own counters
    expect(server.logs.join('')).toContain('Redis unreachable: rate limits fall back to per-instance memory');

    redis = await startRedis();
    let back = false;
    for (let i = 0; i < 50 && !back; i++) {
      back = server.logs.join('').includes('Redis reachable again');
      if (!back) await new Promise((r) => setTimeout(r, 200));
    }
    expect(back).toBe(true);
    // A fresh Redis: the shared counters start over, and count again.
    const after = await call(`${server.url}/v1/pets`, key);
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-remaining')).toBe('2');
    server.expectNoContractViolations();
  });
});
