// Two instances behind a real reverse proxy (Debian's nginx, on a free port): with TRUST_PROXY in each of
// its documented forms (a name, a hop count, an address list, true), the per-address limit sees each
// client's address (from X-Forwarded-For), not the proxy's.
import type { ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { freePort, toolFor } from '@animal-store/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backend } from '../support/backends.js';
import { freshStore, type ServerProcess, startProcess } from '../support/harness.js';
import { startNginx } from '../support/nginx.js';

const running: ServerProcess[] = [];
let nginx: ChildProcess | undefined;
let proxyPort = 0;

/** GET through the proxy from the given loopback address; the status. */
const from = (localAddress: string) =>
  new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: proxyPort, path: '/v1/pets', localAddress }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });

const nginxBinary = backend === 'postgres+redis' ? toolFor('the reverse-proxy suite', 'nginx') : undefined;

describe.runIf(nginxBinary).each(['loopback', '1', '127.0.0.1/8, ::1', 'true'])(
  'behind nginx with TRUST_PROXY=%s',
  (trustProxy) => {
    beforeAll(async () => {
      const binary = nginxBinary as string;
      const store = await freshStore();
      const env = {
        ...store,
        NODE_ENV: 'production',
        TRUST_PROXY: trustProxy,
        RATE_LIMIT_ANONYMOUS_PER_MINUTE: '2',
      };
      running.push(...(await Promise.all([startProcess(env), startProcess(env)])));
      proxyPort = await freePort();
      const upstreams = running.map((s) => `server ${new URL(s.url).host};`).join(' ');
      nginx = await startNginx(
        binary,
        proxyPort,
        `  upstream animal_store { ${upstreams} }
  server {
    listen 127.0.0.1:${proxyPort};
    location / {
      proxy_pass http://animal_store;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    }
  }`,
      );
    });
    afterAll(async () => {
      nginx?.kill('SIGQUIT');
      await Promise.all(running.splice(0).map((s) => s.stop()));
    });

    it('limits each client address on its own, across both instances', async () => {
      const first = [];
      for (let i = 0; i < 3; i++) first.push(await from('127.0.0.2'));
      expect(first).toEqual([401, 401, 429]); // round robin over two instances, one shared count
      expect(await from('127.0.0.3')).toBe(401); // another client: its own count, not the proxy's
    });
  },
);
