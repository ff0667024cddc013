// The built server and key command as processes: configuration, first start, restarts, signals, the clock.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  createKey,
  enterprise,
  listeningUrl,
  keysCommand as runKeys,
  spawnUntilReady,
  toolFor,
} from '@animal-store/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { call, type ServerProcess, serverDist, startProcess, tempDatabase } from './harness.js';

/** Whether the server refuses `key` (401) within 5 s: how long it may answer a changed key from memory. */
async function refusedWithin(url: string, key: string): Promise<boolean> {
  for (const end = Date.now() + 5_500; Date.now() < end; await new Promise((r) => setTimeout(r, 250))) {
    if ((await call(`${url}/v1/pets`, key)).status === 401) return true;
  }
  return false;
}

const keysCommand = (databasePath: string, ...args: string[]) =>
  runKeys(serverDist, { DATABASE_URL: databasePath }, ...args);

/** A fresh database holding one key made by the key command. */
async function databaseWithKey(plan = 'free') {
  const databasePath = tempDatabase();
  const { key } = await createKey(serverDist, { DATABASE_URL: databasePath }, '--plan', plan);
  return { databasePath, key };
}
const faketime = toolFor('the sunset under a moved clock', 'faketime');
/** The built server in production mode under libfaketime, its clock starting at `instant`. */
const startAt = (instant: string, databasePath: string) =>
  start({ DATABASE_URL: databasePath, NODE_ENV: 'production' }, [faketime as string, '-f', `@${instant}`]);

const running: ServerProcess[] = [];
const start = async (...args: Parameters<typeof startProcess>) => {
  const server = await startProcess(...args);
  running.push(server);
  return server;
};
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

describe('configuration', () => {
  it.each([
    ['PORT', 'eighty', /PORT/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL/],
    ['RATE_LIMIT_BAN_SECONDS', '0', /RATE_LIMIT_BAN_SECONDS/],
  ])('when %s=%s, then the server refuses to start with a clear message', async (name, value, message) => {
    await expect(start({ DATABASE_URL: tempDatabase(), [name]: value })).rejects.toThrow(message);
  });
});

describe('first start', () => {
  it('outside production, creates one development key, prints it once, and it works', async () => {
    const databasePath = tempDatabase();
    const first = await start({ DATABASE_URL: databasePath });
    const key = /\n {2}(as_[0-9a-f]{12}_[A-Za-z0-9_-]{43})\n/.exec(first.output())?.[1] as string;
    const res = await call(`${first.url}/v1/pets`, key);
    expect(res.status).toBe(200);
    // Limits a first client loop will not hit by accident (a free key would be banned within a minute).
    expect(res.headers.get('ratelimit-policy')).toBe('"minute";q=6000;w=60, "day";q=1000000;w=86400');
    expect(first.output().split(key)).toHaveLength(2); // printed once, never logged
    await first.stop();
    const second = await start({ DATABASE_URL: databasePath });
    expect(second.output()).not.toContain('Development API key');
    expect(second.output()).toContain('Need an API key? pnpm keys create --plan free');
  });

  it('in production, creates no key', async () => {
    const server = await start({ DATABASE_URL: tempDatabase(), NODE_ENV: 'production' });
    expect(server.output()).not.toContain('as_');
    expect(server.output()).not.toContain('Need an API key');
  });
});

describe('persistence', () => {
  it('keeps pets and keys across a restart, and never reuses an id', async () => {
    const { databasePath, key } = await databaseWithKey('pro');
    const first = await start({ DATABASE_URL: databasePath, NODE_ENV: 'production' });
    const created = await (
      await call(`${first.url}/v1/pets`, key, {
        method: 'POST',
        body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
      })
    ).json();
    expect(await first.stop()).toBe(0);

    const second = await start({ DATABASE_URL: databasePath, NODE_ENV: 'production' });
    expect(await (await call(`${second.url}/v1/pets`, key)).json()).toEqual([created]);
    const next = await (
      await call(`${second.url}/v1/pets`, key, {
        method: 'POST',
        body: JSON.stringify({ name: 'Tom', categoryId: 1 }),
      })
    ).json();
    expect(next.id).toBeGreaterThan(created.id);
  });
});

describe('SIGTERM', () => {
  it('finishes a request that is in flight when the signal comes, then exits 0', async () => {
    const { databasePath, key } = await databaseWithKey('free');
    const server = await start({ DATABASE_URL: databasePath, NODE_ENV: 'production' });
    const { hostname, port } = new URL(server.url);
    // A POST whose body is still arriving when SIGTERM is sent.
    const body = JSON.stringify({ name: 'Late', categoryId: 1 });
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    let answer = '';
    socket.on('data', (d) => {
      answer += d;
    });
    socket.write(
      `POST /v1/pets HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((r) => setTimeout(r, 200));
    const exit = server.stop();
    await new Promise((r) => setTimeout(r, 200));
    expect(server.child.exitCode).toBeNull(); // still draining
    socket.end(body.slice(5));
    await once(socket, 'close');
    expect(answer).toMatch(/^HTTP\/1\.1 201 Created/);
    expect(answer).toContain('"name":"Late"');
    expect(await exit).toBe(0);
    expect(server.output()).toContain('"msg":"stopped"');
  });
});

/** Raw connections to `url`, each with its own answer text and whether it was reset. */
async function rawClients(url: string, count: number) {
  const { hostname, port } = new URL(url);
  return Promise.all(
    Array.from({ length: count }, async () => {
      const socket = connect(Number(port), hostname);
      const client = { socket, text: '', reset: false, closed: new Promise((r) => socket.once('close', r)) };
      socket.on('data', (d) => {
        client.text += d;
      });
      socket.on('error', () => {
        client.reset = true;
      });
      await once(socket, 'connect');
      return client;
    }),
  );
}

describe.each(['1', '2'])('SIGTERM with WORKERS=%s', (workers) => {
  it('answers every request already sent, with Connection: close, and resets none', async () => {
    const server = await start({ DATABASE_URL: tempDatabase(), NODE_ENV: 'production', WORKERS: workers });
    const request = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
    // Keep-alive clients that were answered once and now sit idle, and fresh connections whose requests
    // are written just before the signal (in the server's socket buffers, maybe not yet read).
    const idle = await rawClients(server.url, 10);
    for (const c of idle) c.socket.write(request);
    await new Promise((r) => setTimeout(r, 300));
    const fresh = await rawClients(server.url, 30);
    for (const c of fresh) c.socket.write(request);
    const exit = server.stop();
    // A connection made just after the signal, within the accept window: served, and told to close.
    await new Promise((r) => setTimeout(r, 100));
    const [late] = await rawClients(server.url, 1);
    late?.socket.write(request);
    await Promise.all([...idle, ...fresh, late].map((c) => c?.closed));
    expect(late?.text).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*\r\nConnection: close\r\n/i);
    expect({
      freshReset: fresh.filter((c) => c.reset).length,
      idleReset: idle.filter((c) => c.reset).length,
    }).toEqual({
      freshReset: 0,
      idleReset: 0,
    });
    for (const c of fresh) expect(c.text.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(1);
    for (const c of idle) {
      expect(c.reset).toBe(false);
      expect(c.text.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(1);
    }
    expect(await exit).toBe(0);
  });
});

describe('output that nobody reads', () => {
  it('when stdout is closed by its reader (`| head`), logging fails quietly and SIGTERM still exits in time', async () => {
    const server = await start({
      DATABASE_URL: tempDatabase(),
      NODE_ENV: 'production',
      SHUTDOWN_GRACE_SECONDS: '2',
    });
    server.child.stdout?.destroy(); // the reader goes away: the server's next writes get EPIPE
    for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const started = Date.now();
    const exit = server.stop();
    await Promise.race([exit, new Promise((r) => setTimeout(r, 5_000))]);
    expect(server.child.exitCode ?? server.child.signalCode).not.toBeNull();
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('the command line', () => {
  const node = (script: string, args: string[], cwd: string, env: Record<string, string> = {}) =>
    promisify(execFile)(process.execPath, [join(serverDist, script), ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...env },
    });
  const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

  it.each([
    ['main.js', '--help', /Usage: animal-store-server[\s\S]*environment/],
    ['main.js', '--version', new RegExp(`^${version}\n$`)],
    ['cli/keys.js', '--version', new RegExp(`^${version}\n$`)],
    ['cli/keys.js', '--help', /Usage: keys/],
  ])('%s %s answers and exits 0, creating nothing', async (script, flag, output) => {
    const cwd = mkdtempSync(join(tmpdir(), 'animal-store-cli-'));
    const { stdout } = await node(script, [flag], cwd);
    expect(stdout).toMatch(output);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('reads .env in the working directory for what the environment leaves unset; the environment wins', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'animal-store-env-'));
    writeFileSync(
      join(cwd, '.env'),
      'DATABASE_URL=from-env-file.db\nNODE_ENV=production\nRATE_LIMIT_ANONYMOUS_PER_MINUTE=2\nLOG_LEVEL=warn\n',
    );
    const policy = async (env: Record<string, string>) => {
      const server = await spawnUntilReady(process.execPath, [join(serverDist, 'main.js')], {
        env: { PATH: process.env.PATH ?? '', PORT: '0', ...env },
        cwd,
        ready: (output) => listeningUrl(output) !== undefined,
      });
      try {
        const res = await fetch(`${listeningUrl(server.output())}/v1/pets`);
        return res.headers.get('ratelimit-policy');
      } finally {
        await server.stop();
      }
    };
    expect(await policy({})).toBe('"minute";q=2;w=60');
    expect(existsSync(join(cwd, 'from-env-file.db'))).toBe(true);
    expect(await policy({ RATE_LIMIT_ANONYMOUS_PER_MINUTE: '5' })).toBe('"minute";q=5;w=60');
  });
});

describe('pnpm keys', () => {
  it('creates, lists and revokes keys on the server database', async () => {
    const databasePath = tempDatabase();
    const created = JSON.parse(
      (await keysCommand(databasePath, 'create', ...enterprise(5, 50), '--label', 'acme', '--json')).stdout,
    );
    expect(created).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f]{12}$/),
      plan: 'enterprise',
      perMinute: 5,
      perDay: 50,
      label: 'acme',
    });
    expect(created.key).toMatch(new RegExp(`^as_${created.id}_`));

    const listed = JSON.parse((await keysCommand(databasePath, 'list', '--json')).stdout);
    expect(listed).toEqual([expect.objectContaining({ id: created.id, revokedAt: null })]);
    expect(JSON.stringify(listed)).not.toContain(created.key);
    const [header, row] = (await keysCommand(databasePath, 'list')).stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID +PLAN +PER MINUTE +PER DAY +CREATED +STATE +LAST USED +LABEL$/);
    expect(row).toMatch(new RegExp(`^${created.id} +enterprise +5 +50 +\\S+ +active +never +acme$`));
    // Aligned: every column starts where its header does.
    for (const name of ['PLAN', 'PER MINUTE', 'STATE', 'LABEL']) {
      const at = (header as string).indexOf(name);
      expect((row as string)[at - 1]).toBe(' ');
      expect((row as string)[at]).not.toBe(' ');
    }

    const server = await start({ DATABASE_URL: databasePath, NODE_ENV: 'production' });
    expect((await call(`${server.url}/v1/pets`, created.key)).status).toBe(200);
    expect((await keysCommand(databasePath, 'revoke', created.id)).stdout).toContain(
      `Revoked key ${created.id}`,
    );
    expect(await refusedWithin(server.url, created.key)).toBe(true); // within the key cache's 5 s
    expect(JSON.parse((await keysCommand(databasePath, 'list', '--json')).stdout)[0].revokedAt).toEqual(
      expect.any(String),
    );
  });

  it.each([
    [['create'], /required option '--plan <plan>'/],
    [['create', '--plan', 'gold'], /Allowed choices are free, pro, business, enterprise/],
    [
      ['create', '--plan', 'enterprise', '--per-minute', '5'],
      /enterprise keys need --per-minute and --per-day/,
    ],
    [['create', '--plan', 'free', '--per-day', '5'], /apply to enterprise keys only/],
    [
      ['create', '--plan', 'enterprise', '--per-minute', '-1', '--per-day', '5'],
      /must be a positive integer/,
    ],
    [['create', '--plan', 'enterprise', '--per-minute', '100', '--per-day', '50'], /above --per-day/],
    [['revoke', 'nope'], /there is no database at/],
    [['list'], /there is no database at/],
  ])('when run with %j, then it fails with a clear message', async (args, message) => {
    await expect(keysCommand(tempDatabase(), ...args)).rejects.toMatchObject({
      stderr: expect.stringMatching(message),
    });
  });
});

describe.runIf(faketime)('GET /pets/{petId} after its sunset', () => {
  it('when the clock is past 2030-12-05, then 410 names the replacement; GET /pets still works', async () => {
    const { databasePath, key } = await databaseWithKey();
    const server = await startAt('2030-12-05 00:00:01', databasePath);
    const res = await call(`${server.url}/v1/pets/1`, key);
    expect(res.status).toBe(410);
    expect(res.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
    expect(await res.json()).toEqual({
      code: 'gone',
      message: expect.stringMatching(/use GET \/pets\?id=1 instead/),
      status: 410,
    });
    expect((await call(`${server.url}/v1/pets`, key)).status).toBe(200);
  });

  it('when the clock is just before the sunset, then getPet still answers', async () => {
    const { databasePath, key } = await databaseWithKey();
    const server = await startAt('2030-12-04 23:59:00', databasePath);
    expect((await call(`${server.url}/v1/pets/1`, key)).status).toBe(404);
  });
});

/**
 * A 1/min key on a server started with RATE_LIMIT_BAN_THRESHOLD=1, after three requests (which should be
 * admitted, limited, then banned: `codes`).
 */
async function banOneKey() {
  const databasePath = tempDatabase();
  const created = await createKey(serverDist, { DATABASE_URL: databasePath }, ...enterprise(1, 100));
  const server = await start({
    DATABASE_URL: databasePath,
    NODE_ENV: 'production',
    RATE_LIMIT_BAN_THRESHOLD: '1',
  });
  const codes: unknown[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await call(`${server.url}/v1/pets`, created.key);
    codes.push(res.status === 200 ? 200 : (await res.json()).code);
  }
  return { databasePath, id: created.id, key: created.key, server, codes };
}

describe('pnpm keys: operating keys', () => {
  it('list shows last use and bans; unban ends a ban on the running server', async () => {
    const { databasePath, id, key, server, codes } = await banOneKey();
    expect(codes).toEqual([200, 'rate_limited', 'temporarily_banned']);
    const [listed] = JSON.parse((await keysCommand(databasePath, 'list', '--json')).stdout);
    expect(listed).toMatchObject({ id, lastUsedAt: expect.any(String), bannedUntil: expect.any(String) });
    expect(Date.parse(listed.bannedUntil)).toBeGreaterThan(Date.now() + 800_000);
    expect((await keysCommand(databasePath, 'list')).stdout).toContain('banned until');

    expect((await keysCommand(databasePath, 'unban', id)).stdout).toContain(`Unbanned key ${id}`);
    expect(JSON.parse((await keysCommand(databasePath, 'list', '--json')).stdout)[0].bannedUntil).toBeNull();
    let code: unknown;
    for (let i = 0; i < 30 && code !== 'rate_limited'; i++) {
      code = (await (await call(`${server.url}/v1/pets`, key)).json()).code; // the minute is still spent
      if (code !== 'rate_limited') await new Promise((r) => setTimeout(r, 300));
    }
    expect(code).toBe('rate_limited'); // no longer banned, within the ban cache's 5 s
  }, 30_000);

  it('rotate gives a new secret for the same key; the old one works during the grace period only', async () => {
    const databasePath = tempDatabase();
    const { id, key: old } = await createKey(serverDist, { DATABASE_URL: databasePath }, '--plan', 'pro');
    const server = await start({ DATABASE_URL: databasePath, NODE_ENV: 'production' });
    const graced = JSON.parse(
      (await keysCommand(databasePath, 'rotate', id, '--grace-seconds', '600', '--json')).stdout,
    );
    expect(graced.key).toMatch(new RegExp(`^as_${id}_`));
    expect((await call(`${server.url}/v1/pets`, graced.key)).status).toBe(200);
    expect((await call(`${server.url}/v1/pets`, old)).status).toBe(200);
    // The default written out: 0 is accepted, as the help says.
    const now = JSON.parse(
      (await keysCommand(databasePath, 'rotate', id, '--grace-seconds', '0', '--json')).stdout,
    );
    expect(now.previousValidForSeconds).toBe(0);
    expect((await call(`${server.url}/v1/pets`, now.key)).status).toBe(200);
    // Another process rotated it: the server's memory of the old secrets lasts at most 5 s.
    expect(await refusedWithin(server.url, graced.key)).toBe(true);
    expect(await refusedWithin(server.url, old)).toBe(true);
    const [listed] = JSON.parse((await keysCommand(databasePath, 'list', '--json')).stdout);
    expect(listed).toMatchObject({ id, plan: 'pro', perMinute: 300, revokedAt: null });
  });

  it('list on a path that does not exist says so and creates nothing', async () => {
    const databasePath = tempDatabase();
    await expect(keysCommand(databasePath, 'list')).rejects.toMatchObject({
      stderr: expect.stringContaining(`there is no database at ${databasePath}`),
    });
    expect(existsSync(databasePath)).toBe(false);
  });

  it('pnpm --silent keys create --json prints exactly one JSON document', async () => {
    const databasePath = tempDatabase();
    const { stdout } = await promisify(execFile)(
      'pnpm',
      ['--silent', 'keys', 'create', '--plan', 'free', '--json'],
      {
        cwd: fileURLToPath(new URL('../../..', import.meta.url)),
        env: { ...process.env, DATABASE_URL: databasePath },
      },
    );
    expect(JSON.parse(stdout)).toMatchObject({ plan: 'free', key: expect.stringMatching(/^as_/) });
  }, 120_000);
});

describe('configuration reaches the running server', () => {
  it('TRUST_PROXY: behind a trusted proxy, the per-address limit counts each forwarded client', async () => {
    const env = {
      DATABASE_URL: tempDatabase(),
      NODE_ENV: 'production',
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: '2',
    };
    const asClient = (url: string, address: string) =>
      fetch(`${url}/v1/pets`, { headers: { 'x-forwarded-for': address } });
    const trusting = await start({ ...env, TRUST_PROXY: 'loopback' });
    const statuses = [];
    for (const address of ['203.0.113.1', '203.0.113.1', '203.0.113.1', '203.0.113.2']) {
      statuses.push((await asClient(trusting.url, address)).status);
    }
    expect(statuses).toEqual([401, 401, 429, 401]);

    const untrusting = await start({ ...env, DATABASE_URL: tempDatabase() });
    const shared = [];
    for (const address of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) {
      shared.push((await asClient(untrusting.url, address)).status);
    }
    expect(shared).toEqual([401, 401, 429]); // all one address: the proxy's
  });

  it('RATE_LIMIT_BAN_THRESHOLD: the key is banned after that many requests answered 429', async () => {
    const { codes } = await banOneKey();
    expect(codes).toEqual([200, 'rate_limited', 'temporarily_banned']);
  });

  it('logs every request with its request id', async () => {
    const { databasePath, key } = await databaseWithKey('free');
    const server = await start({ DATABASE_URL: databasePath, NODE_ENV: 'production' });
    await call(`${server.url}/v1/pets`, key, { headers: { 'x-request-id': 'trace-4711' } });
    await new Promise((r) => setTimeout(r, 100));
    const line = server
      .output()
      .split('\n')
      .find((l) => l.includes('request completed'));
    expect(JSON.parse(line as string)).toMatchObject({
      req: { id: 'trace-4711', method: 'GET', url: '/v1/pets' },
    });
  });
});

describe('WORKERS', () => {
  it('shares the port over two workers, limits stay exact, a dead worker is replaced, SIGTERM drains all', async () => {
    const databasePath = tempDatabase();
    const { key } = await createKey(serverDist, { DATABASE_URL: databasePath }, ...enterprise(20, 1000));
    const server = await start({ DATABASE_URL: databasePath, NODE_ENV: 'production', WORKERS: '2' });
    const statuses = await Promise.all(
      Array.from({ length: 200 }, () => call(`${server.url}/v1/pets`, key).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(180);

    const pids = [...server.output().matchAll(/"workerPid":(\d+),"msg":"worker started"/g)].map((m) =>
      Number(m[1]),
    );
    expect(pids).toHaveLength(2);
    process.kill(pids[0] as number, 'SIGKILL');
    for (let i = 0; i < 50 && !server.output().includes('worker died; starting another'); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(server.output()).toContain('worker died; starting another');
    const answered = await Promise.all(
      Array.from({ length: 10 }, () => fetch(`${server.url}/healthz`).then((r) => r.status)),
    );
    expect(answered.every((s) => s === 200)).toBe(true);

    expect(await server.stop()).toBe(0);
    expect(server.output()).toMatch(/"msg":"stopped"/);
  }, 60_000);
});
