// A start whose Redis is not answering yet: every address the URL names refuses its connections for the first
// seconds (a Redis started beside the service, a Cluster busy enough that the slot refresh fails), then
// answers. The start waits for it within its deadline (docs/failures.md: 5 s) and connects, on one server, the
// Sentinels and a Cluster alike. A start that gave up after its first try failed a CLI under load, with
// "cannot be reached (connection closed)" while the Cluster was up.
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { backend, redisClient, redisUrl, storePrefix } from '../support/backends.js';

const servers: Server[] = [];
const sockets = new Set<Socket>();
afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.splice(0).map((server) => new Promise((r) => server.close(r))));
});

/**
 * A port on loopback in front of `port` that closes every connection at once until `opensAt`, then
 * forwards them. Returns its port.
 */
async function closedUntil(opensAt: number, port: number): Promise<number> {
  const server = createServer((client) => {
    sockets.add(client);
    client.on('error', () => {});
    if (Date.now() < opensAt) {
      client.destroy();
      return;
    }
    const upstream = createConnection({ host: '127.0.0.1', port });
    sockets.add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

describe.runIf(backend === 'postgres+redis')(
  'a start while Redis refuses connections for its first seconds',
  () => {
    it('waits for it within the start deadline, tries again, and connects', async () => {
      // Every seed, Sentinel or server the URL names goes through a port that refuses for 2.5 s: longer than
      // one connection attempt and one slot refresh (2 s each), shorter than the start's 5 s.
      const opensAt = Date.now() + 2_500;
      const addresses = [...redisUrl.matchAll(/127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1]));
      expect(addresses.length).toBeGreaterThan(0);
      let url = redisUrl;
      for (const port of addresses) {
        url = url.replace(`127.0.0.1:${port}`, `127.0.0.1:${await closedUntil(opensAt, port)}`);
      }

      const client = await redisClient(url);
      try {
        expect(Date.now()).toBeGreaterThanOrEqual(opensAt); // it did meet the refusals, and waited them out
        const key = `${storePrefix}_start_${process.pid}`;
        expect(await client.set(key, '1', 'PX', 1_000)).toBe('OK');
      } finally {
        client.disconnect();
      }
    });
  },
);
