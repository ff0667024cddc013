// The compose deployment's proxy (deploy/compose/nginx.conf, as shipped; only its addresses changed), run by
// Debian's nginx: its pool of kept-alive upstream connections against an instance that drains. A draining
// instance closes a connection once it has sat idle for idleBeforeCloseMs (server.ts); a request the proxy
// sent on it at that moment is lost, and nginx does not retry a POST (a 502: the compose test met one
// beside a second suite). So the proxy lets go of an idle upstream connection sooner than that, and reuses
// the ones in use. The upstream here is a bare HTTP server that says which connection each request came on.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { freePort, toolFor } from '@animal-store/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idleBeforeCloseMs } from '../../src/server.js';
import { startNginx } from '../support/nginx.js';

const nginxBinary = toolFor('the compose proxy suite', 'nginx');
const shipped = readFileSync(
  fileURLToPath(new URL('../../../../deploy/compose/nginx.conf', import.meta.url)),
  'utf8',
);

const connections = new WeakMap<Socket, number>();
let opened = 0;
const upstream = createServer((req: IncomingMessage, res) => {
  if (!connections.has(req.socket)) connections.set(req.socket, ++opened);
  res.end(String(connections.get(req.socket)));
});
upstream.keepAliveTimeout = 60_000; // an instance's own keep-alive is long; the proxy's is what is tested
let nginx: ChildProcess | undefined;
let proxyPort = 0;
/** Which upstream connection a request through the proxy came on. */
const connectionOf = async () => Number(await (await fetch(`http://127.0.0.1:${proxyPort}/`)).text());

describe.runIf(nginxBinary)('the compose proxy (deploy/compose/nginx.conf)', () => {
  beforeAll(async () => {
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    const { port } = upstream.address() as AddressInfo;
    proxyPort = await freePort();
    const server = shipped
      .replace(/server instance-a:3000/, `server 127.0.0.1:${port}`)
      .replace(/\n\s*server instance-b:3000[^\n]*/, '')
      .replace('listen 80;', `listen 127.0.0.1:${proxyPort};`);
    expect(server).not.toMatch(/instance-|listen 80/);
    nginx = await startNginx(nginxBinary as string, proxyPort, server);
  });
  afterAll(async () => {
    nginx?.kill('SIGQUIT');
    upstream.closeAllConnections();
    upstream.close();
  });

  it('reuses an upstream connection in use, and lets go of one idle for less than a draining instance waits', async () => {
    // Kept alive: back to back, the same connection (a pair, up to three times: a busy machine may hold
    // one request past the proxy's 500 ms).
    let pair: number[] = [];
    for (let i = 0; i < 3 && pair[0] !== pair[1]; i++) pair = [await connectionOf(), await connectionOf()];
    expect(pair[1]).toBe(pair[0]);
    // Idle for as long as a draining instance waits before it closes a connection: the proxy has let go
    // of it by then, so the instance never closes one under a request the proxy is sending.
    await new Promise((r) => setTimeout(r, idleBeforeCloseMs));
    expect(await connectionOf()).not.toBe(pair[1]);
  });

  it('serves no /metrics from any client: Prometheus scrapes each instance on the project network', async () => {
    for (const path of ['/metrics', '/METRICS', '/metrics/', '/metrics?x=1']) {
      const res = await fetch(`http://127.0.0.1:${proxyPort}${path}`);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { code: string }).code, path).toBe('not_found');
    }
    expect((await fetch(`http://127.0.0.1:${proxyPort}/v1/metrics`)).status).toBe(200); // only that path
  });
});
