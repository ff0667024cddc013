// The built server and key command as processes: configuration, first start, restarts, the command line, the clock.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createKey, freePort, listeningUrl, spawnUntilReady, toolFor } from '@animal-store/test-support';
import { describe, expect, it } from 'vitest';
import { call, processesStoppedAfterEach, serverDist, tempDatabase } from '../support/harness.js';

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

const start = processesStoppedAfterEach();

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
    expect(second.output()).toContain(
      "Need an API key? npx -y -p node@24 -p pnpm@10 -c 'pnpm keys create --plan free'",
    );
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

const { buildVersion } = (await import(new URL('../../scripts/build-info.mjs', import.meta.url).href)) as {
  buildVersion: (dir?: string, given?: string) => string;
};

describe('the version a build reports', () => {
  it("is the release's in the commit that versioned it, `<release>+<commit>` after it, the release's outside git", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-build-'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ version: '9.9.9' }));
    expect(buildVersion(dir)).toBe('9.9.9'); // not a checkout: an installed package
    const git = (...args: string[]) =>
      promisify(execFile)('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir });
    await git('init', '-q');
    writeFileSync(join(dir, 'CHANGELOG.md'), '## 9.9.9\n');
    await git('add', '.');
    await git('commit', '-qm', 'Version packages');
    expect(buildVersion(dir)).toBe('9.9.9');
    writeFileSync(join(dir, 'later.txt'), 'a change after the release\n');
    await git('add', '.');
    await git('commit', '-qm', 'A change on main');
    const head = (await git('rev-parse', '--short=7', 'HEAD')).stdout.trim();
    expect(buildVersion(dir)).toBe(`9.9.9+${head}`);
  });

  it('is BUILD_VERSION where the host says it (the image build, without .git), and refuses what is not a version', () => {
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-build-'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ version: '9.9.9' }));
    expect(buildVersion(dir, '9.9.9+1a2b3c4')).toBe('9.9.9+1a2b3c4');
    expect(buildVersion(dir, '9.9.9+unknown')).toBe('9.9.9+unknown');
    expect(() => buildVersion(dir, '$(rm -rf /)')).toThrow(/BUILD_VERSION: .* is not a version/);
  });
});

describe('the command line', () => {
  const node = (script: string, args: string[], cwd: string, env: Record<string, string> = {}) =>
    promisify(execFile)(process.execPath, [join(serverDist, script), ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...env },
    });
  const version = buildVersion().replace('+', '\\+');

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

  it('--healthcheck asks the configured listener, IPv6 loopback included: 0 while it answers, 1 once it is gone', async () => {
    const port = String(await freePort());
    const env = { HOST: '::1', PORT: port, DATABASE_URL: tempDatabase(), NODE_ENV: 'production' };
    const server = await start(env);
    const cwd = mkdtempSync(join(tmpdir(), 'animal-store-cli-'));
    await expect(node('main.js', ['--healthcheck'], cwd, env)).resolves.toMatchObject({ stdout: '' });
    await server.stop();
    await expect(node('main.js', ['--healthcheck'], cwd, env)).rejects.toMatchObject({ code: 1 });
    expect(readdirSync(cwd)).toEqual([]); // nothing made: no store, no key
  });

  // Node 22.1 and later: the installed commands (bin/) compile the service's modules once per machine.
  it.runIf(typeof module.enableCompileCache === 'function')(
    "the installed commands keep Node's compile cache in the temporary folder (TMPDIR)",
    async () => {
      const temporary = mkdtempSync(join(tmpdir(), 'animal-store-cache-'));
      const cache = join(temporary, 'node-compile-cache');
      const bin = (name: string, args: string[]) =>
        promisify(execFile)(process.execPath, [join(serverDist, '..', 'bin', name), ...args], {
          env: { PATH: process.env.PATH ?? '', TMPDIR: temporary },
        });
      await expect(bin('animal-store-keys.js', ['--version'])).resolves.toMatchObject({ stderr: '' });
      const cached = () => readdirSync(cache, { recursive: true }).length;
      const afterKeys = cached();
      expect(afterKeys).toBeGreaterThan(100); // one entry a module: the command's, pino's, the store's
      await expect(bin('animal-store-server.js', ['--version'])).resolves.toMatchObject({ stderr: '' });
      expect(cached()).toBeGreaterThan(afterKeys); // the server's own modules beside the command's
    },
  );

  // `script` (util-linux) gives the server a terminal as its stdout, as a developer's shell does.
  const terminal = toolFor('logs on a terminal', 'script', 'bsdutils');
  it.runIf(terminal)(
    'on a terminal, logs are pretty-printed outside production and JSON in production; piped, always JSON',
    async () => {
      const onTerminal = async (nodeEnv: string) => {
        const command = `exec "${process.execPath}" "${join(serverDist, 'main.js')}"`;
        const server = await spawnUntilReady(terminal as string, ['-qfec', command, '/dev/null'], {
          env: { PATH: process.env.PATH ?? '', PORT: '0', NODE_ENV: nodeEnv, DATABASE_URL: tempDatabase() },
          ready: /listening/,
        });
        await server.stop();
        return server.output();
      };
      const pretty = await onTerminal('development');
      expect(pretty).toMatch(/INFO.*listening/);
      expect(pretty).not.toContain('{"level"');
      const json = await onTerminal('production');
      expect(json).toMatch(/^\{"level":30,.*"msg":"listening"/m);
      const piped = await start({ DATABASE_URL: tempDatabase(), NODE_ENV: 'development' });
      expect(piped.output()).toMatch(/^\{"level":30,.*"msg":"listening"/m);
    },
  );

  it('pnpm start: Ctrl-C (SIGINT to the whole process group, as a terminal sends it) ends with exit 0 and no pnpm error', async () => {
    const root = fileURLToPath(new URL('../../../..', import.meta.url));
    // Under TURBO_FORCE (turbo's switch to skip its cache), a start on a fresh build builds nothing: the
    // suite's other processes read that dist meanwhile (scripts/fresh-build.mjs).
    const builtAt = () => statSync(join(root, 'apps/server/dist/cli/keys.js')).mtimeMs;
    const before = builtAt();
    const started = await spawnUntilReady('pnpm', ['start'], {
      env: {
        ...process.env,
        PORT: '0',
        NODE_ENV: 'production',
        DATABASE_URL: tempDatabase(),
        TURBO_FORCE: 'true',
      },
      cwd: root,
      ready: (output) => listeningUrl(output) !== undefined,
      timeoutMs: 120_000,
    });
    const exited = once(started.child, 'exit');
    process.kill(-(started.child.pid as number), 'SIGINT');
    const [code] = await exited;
    expect(code).toBe(0);
    expect(started.output()).toMatch(/"msg":"stopped"/);
    expect(started.output()).not.toMatch(/ELIFECYCLE|Command failed/);
    expect(builtAt()).toBe(before);
  }, 180_000);

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

  it('logs every request with its request id', async () => {
    const { databasePath, key } = await databaseWithKey('free');
    const server = await start({ DATABASE_URL: databasePath, NODE_ENV: 'production' });
    await call(`${server.url}/v1/pets`, key, { headers: { 'x-request-id': 'trace-4711' } });
    // The line is written after the answer: at once when idle, later under load.
    const logged = () =>
      server
        .output()
        .split('\n')
        .find((l) => l.includes('request completed'));
    await expect.poll(logged, { timeout: 10_000 }).toBeDefined();
    expect(JSON.parse(logged() as string)).toMatchObject({
      req: { id: 'trace-4711', method: 'GET', url: '/v1/pets' },
    });
  });
});
