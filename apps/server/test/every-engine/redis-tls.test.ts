// rediss:// with a password, for real: a redis-server of the test's own serving TLS only, with a certificate
// from a CA of the test's own that the service trusts through NODE_EXTRA_CA_CERTS (as docs/scaling-out.md
// tells operators of a private CA), and `requirepass`; and rediss+sentinel://, with a Sentinel of the test's
// own that serves TLS only too and names that primary.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createKey,
  enterprise,
  freePort,
  spawnTied,
  toolFor,
  untilListening,
} from '@animal-store/test-support';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { backend, redisTopology } from '../support/backends.js';
import { call, freshStore, processesStoppedAfterEach, serverDist } from '../support/harness.js';

const cleanups: (() => unknown)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});
const startProcess = processesStoppedAfterEach();

/** A CA, and a certificate for 127.0.0.1 signed by it, in a temporary folder. */
function certificates(dir: string) {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=test CA',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
  );
  ssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    'redis.key',
    '-out',
    'redis.csr',
  );
  writeFileSync(join(dir, 'san.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  ssl(
    'x509',
    '-req',
    '-in',
    'redis.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    'san.cnf',
    '-out',
    'redis.pem',
  );
  return { ca: join(dir, 'ca.pem'), cert: join(dir, 'redis.pem'), key: join(dir, 'redis.key') };
}

const openssl = toolFor('the Redis TLS suite', 'openssl');

/**
 * A redis-server of the test's own that serves TLS only (a certificate of a CA of the test's own, in a
 * temporary folder) and asks for `password`; `extra`: more of its arguments.
 */
async function tlsRedis(password: string, extra: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-redis-tls-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const files = certificates(dir);
  const tls = ['--tls-cert-file', files.cert, '--tls-key-file', files.key, '--tls-ca-cert-file', files.ca];
  const port = await freePort();
  const redis = spawnTied(
    'redis-server',
    [
      ...[
        '--port',
        '0',
        '--tls-port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
      ],
      ...tls,
      ...['--tls-auth-clients', 'no', '--requirepass', password, ...extra],
    ],
    { stdio: 'ignore' },
  );
  cleanups.push(() => redis.kill('SIGKILL'));
  await untilListening(port, 'redis-server (TLS)');
  return { dir, files, port };
}

/**
 * Starts the service on `env` (REDIS_URL said by the test, the CA trusted through NODE_EXTRA_CA_CERTS): a key
 * of 2 a minute gets 200, 200, 429, the service is ready, and the key's window is in the Redis at `port`,
 * read there over TLS with the CA, as the service does.
 */
async function limitsKeptIn(
  redis: Awaited<ReturnType<typeof tlsRedis>>,
  password: string,
  redisUrl: string,
): Promise<{ env: Record<string, string>; server: Awaited<ReturnType<typeof startProcess>> }> {
  const store = await freshStore();
  const env = { ...store, NODE_EXTRA_CA_CERTS: redis.files.ca, REDIS_URL: redisUrl };
  const server = await startProcess(env);
  const key = await createKey(serverDist, env, ...enterprise(2, 100));
  const statuses = [];
  for (let i = 0; i < 3; i++) statuses.push((await call(`${server.url}/v1/pets`, key.key)).status);
  expect(statuses).toEqual([200, 200, 429]);
  expect((await (await fetch(`${server.url}/readyz`)).json()).status).toBe('ready');
  const view = new Redis({
    port: redis.port,
    host: '127.0.0.1',
    password,
    tls: { ca: [readFileSync(redis.files.ca)] },
  });
  cleanups.push(() => view.disconnect());
  expect(await view.get(`${store.REDIS_KEY_PREFIX}minute:${key.id}`)).toBe('2');
  return { env, server };
}

describe.runIf(backend === 'postgres+redis' && redisTopology === 'single' && openssl)(
  'Redis over TLS, with a password',
  () => {
    it('rediss:// with the password: limits in Redis; a wrong password stops the start with one line naming REDIS_URL, no secret', async () => {
      const password = 'tls-test-password-4f1c';
      const redis = await tlsRedis(password);
      const { env } = await limitsKeptIn(redis, password, `rediss://:${password}@127.0.0.1:${redis.port}`);

      const wrong = { ...env, REDIS_URL: `rediss://:not-the-${password}@127.0.0.1:${redis.port}` };
      const refused = await startProcess(wrong).then(
        () => 'started',
        (error: Error) => error.message,
      );
      expect(refused).toContain('REDIS_URL');
      expect(refused).not.toContain(password);
    });

    it('rediss+sentinel:// asks a TLS Sentinel for the primary, and keeps the limits in it over TLS', async () => {
      const password = 'sentinel-tls-password-9b2e';
      const redis = await tlsRedis(password, ['--tls-replication', 'yes']);
      const { files } = redis;
      const sentinelPort = await freePort();
      // A Sentinel rewrites its configuration file: one of its own, in the test's folder.
      const conf = join(redis.dir, 'sentinel.conf');
      writeFileSync(
        conf,
        [
          'port 0',
          `tls-port ${sentinelPort}`,
          'bind 127.0.0.1',
          `tls-cert-file ${files.cert}`,
          `tls-key-file ${files.key}`,
          `tls-ca-cert-file ${files.ca}`,
          'tls-auth-clients no',
          'tls-replication yes',
          `sentinel monitor tls-primary 127.0.0.1 ${redis.port} 1`,
          `sentinel auth-pass tls-primary ${password}`,
          '',
        ].join('\n'),
      );
      const sentinel = spawnTied('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
      cleanups.push(() => sentinel.kill('SIGKILL'));
      await untilListening(sentinelPort, 'redis-server --sentinel (TLS)');
      const { server } = await limitsKeptIn(
        redis,
        password,
        `rediss+sentinel://:${password}@127.0.0.1:${sentinelPort}/tls-primary`,
      );
      expect(server.output()).not.toMatch(/unreachable|cannot be reached/i);
    });
  },
);
