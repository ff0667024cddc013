// The built server and key command as processes: configuration, first start, restarts, signals, the clock.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { call, type ServerProcess, startProcess, tempDatabase } from './harness.js';

const run = promisify(execFile);
const keysJs = new URL('../dist/cli/keys.js', import.meta.url).pathname;
const keysCommand = (databasePath: string, ...args: string[]) =>
  run(process.execPath, [keysJs, ...args], {
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: databasePath },
  });

/** A fresh database holding one key made by the key command. */
async function databaseWithKey(plan = 'free') {
  const databasePath = tempDatabase();
  const { key } = JSON.parse(
    (await keysCommand(databasePath, 'create', '--plan', plan, '--json')).stdout,
  ) as { key: string };
  return { databasePath, key };
}
/** The built server in production mode under libfaketime, its clock starting at `instant`. */
const startAt = (instant: string, databasePath: string) =>
  start({ DATABASE_URL: databasePath, NODE_ENV: 'production' }, ['faketime', '-f', `@${instant}`]);

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
    expect((await call(`${first.url}/v1/pets`, key)).status).toBe(200);
    expect(first.output().split(key)).toHaveLength(2); // printed once, never logged
    await first.stop();
    const second = await start({ DATABASE_URL: databasePath });
    expect(second.output()).not.toContain('Development API key');
  });

  it('in production, creates no key', async () => {
    const server = await start({ DATABASE_URL: tempDatabase(), NODE_ENV: 'production' });
    expect(server.output()).not.toContain('as_');
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

describe('pnpm keys', () => {
  it('creates, lists and revokes keys on the server database', async () => {
    const databasePath = tempDatabase();
    const created = JSON.parse(
      (
        await keysCommand(
          databasePath,
          'create',
          '--plan',
          'enterprise',
          '--per-minute',
          '5',
          '--per-day',
          '50',
          '--label',
          'acme',
          '--json',
        )
      ).stdout,
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
    expect((await keysCommand(databasePath, 'list')).stdout).toMatch(
      new RegExp(`${created.id} +enterprise +5/min 50/day +active +acme`),
    );

    const server = await start({ DATABASE_URL: databasePath, NODE_ENV: 'production' });
    expect((await call(`${server.url}/v1/pets`, created.key)).status).toBe(200);
    expect((await keysCommand(databasePath, 'revoke', created.id)).stdout).toContain(
      `Revoked key ${created.id}`,
    );
    expect((await call(`${server.url}/v1/pets`, created.key)).status).toBe(401);
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
    [['revoke', 'nope'], /no active key with id nope/],
  ])('when run with %j, then it fails with a clear message', async (args, message) => {
    await expect(keysCommand(tempDatabase(), ...args)).rejects.toMatchObject({
      stderr: expect.stringMatching(message),
    });
  });
});

describe('GET /pets/{petId} after its sunset', () => {
  it('when the clock is past 2030-12-05, then 410 names the replacement; GET /pets still works', async () => {
    const { databasePath, key } = await databaseWithKey();
    const server = await startAt('2030-12-05 00:00:01', databasePath);
    const res = await call(`${server.url}/v1/pets/1`, key);
    expect(res.status).toBe(410);
    expect(res.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
    expect(await res.json()).toEqual({
      code: 'gone',
      message: expect.stringMatching(/use GET \/pets instead/),
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
