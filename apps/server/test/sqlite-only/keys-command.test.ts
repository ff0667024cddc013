// The operators' key command (the built cli/keys.js, as `pnpm keys` runs it) against a real database and a
// running server: create, list, update, usage, revoke, rotate, unban, and its refusals.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createKey, enterprise, keysCommand as runKeys } from '@animal-store/test-support';
import { describe, expect, it } from 'vitest';
import { call, processesStoppedAfterEach, serverDist, tempDatabase } from '../support/harness.js';

/** Whether the server refuses `key` (401) within 5 s: how long it may answer a changed key from memory. */
async function refusedWithin(url: string, key: string): Promise<boolean> {
  for (const end = Date.now() + 5_500; Date.now() < end; await new Promise((r) => setTimeout(r, 250))) {
    if ((await call(`${url}/v1/pets`, key)).status === 401) return true;
  }
  return false;
}

const keysCommand = (databasePath: string, ...args: string[]) =>
  runKeys(serverDist, { DATABASE_URL: databasePath }, ...args);

const start = processesStoppedAfterEach();

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

/**
 * A 1/min key on a server started with RATE_LIMIT_BAN_THRESHOLD=1, after three requests (which should be
 * admitted, limited, then banned: `codes`).
 */
// (RATE_LIMIT_BAN_THRESHOLD reaching the running server is checked here too: `codes`.)
async function banOneKey() {
  const databasePath = tempDatabase();
  const created = await createKey(serverDist, { DATABASE_URL: databasePath }, ...enterprise(1, 100));
  const server = await start({
    DATABASE_URL: databasePath,
    NODE_ENV: 'production',
    RATE_LIMIT_BAN_THRESHOLD: '1',
    RATE_LIMIT_BAN_GRACE_SECONDS: '0',
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
    // --reset minute starts the spent minute over: the running server admits the key again.
    expect((await keysCommand(databasePath, 'unban', id, '--reset', 'minute')).stdout).toContain(
      `Unbanned key ${id}; its minute started over`,
    );
    const seen: unknown[] = [];
    for (let i = 0; i < 30 && seen.at(-1) !== 200; i++) {
      const res = await call(`${server.url}/v1/pets`, key);
      seen.push(res.status === 200 ? 200 : ((await res.json()) as { code: string }).code);
      if (seen.at(-1) !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    // The server takes from the fresh minute at its next look at the store: within a second (recheckMs).
    expect(seen.at(-1)).toBe(200);
    expect(seen.length).toBeLessThanOrEqual(6);
    expect(new Set(seen.slice(0, -1))).not.toContain('temporarily_banned');
  }, 90_000); // six runs of the keys command and a server: seconds each on a busy machine

  it('rotate gives a new secret for the same key; the old one works during the grace period only', async () => {
    const databasePath = tempDatabase();
    const { id, key: old } = await createKey(serverDist, { DATABASE_URL: databasePath }, '--plan', 'pro');
    const server = await start({ DATABASE_URL: databasePath, NODE_ENV: 'production' });
    const graced = JSON.parse(
      (await keysCommand(databasePath, 'rotate', id, '--grace-seconds', '600', '--json')).stdout,
    );
    expect(graced.key).toMatch(new RegExp(`^as_${id}_`));
    // The end of the grace period the store recorded: 600 s from the rotation.
    expect(Date.parse(graced.previousValidUntil) - Date.now()).toBeGreaterThan(590_000);
    expect(Date.parse(graced.previousValidUntil) - Date.now()).toBeLessThanOrEqual(600_000);
    expect((await call(`${server.url}/v1/pets`, graced.key)).status).toBe(200);
    expect((await call(`${server.url}/v1/pets`, old)).status).toBe(200);
    // The default written out: 0 is accepted, as the help says.
    const now = JSON.parse(
      (await keysCommand(databasePath, 'rotate', id, '--grace-seconds', '0', '--json')).stdout,
    );
    expect(now).toMatchObject({ previousValidForSeconds: 0, previousValidUntil: null });
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
        cwd: fileURLToPath(new URL('../../../..', import.meta.url)),
        env: { ...process.env, DATABASE_URL: databasePath },
      },
    );
    expect(JSON.parse(stdout)).toMatchObject({ plan: 'free', key: expect.stringMatching(/^as_/) });
  }, 120_000);
});

describe('pnpm keys: plans and usage', () => {
  it('update moves a key to another plan on the running server; usage shows its windows and days', async () => {
    const databasePath = tempDatabase();
    const { id, key } = await createKey(
      serverDist,
      { DATABASE_URL: databasePath },
      '--plan',
      'free',
      '--customer',
      'cus_9',
    );
    const server = await start({ DATABASE_URL: databasePath, NODE_ENV: 'production' });
    for (let i = 0; i < 4; i++) expect((await call(`${server.url}/v1/pets`, key)).status).toBe(200);

    const updated = JSON.parse(
      (await keysCommand(databasePath, 'update', id, '--plan', 'pro', '--label', 'upgraded', '--json'))
        .stdout,
    );
    expect(updated).toMatchObject({
      id,
      plan: 'pro',
      perMinute: 300,
      perDay: 10_000,
      label: 'upgraded',
      customerId: 'cus_9',
    });
    let policy = '';
    for (const end = Date.now() + 5_500; Date.now() < end && !policy.includes('q=300'); ) {
      policy = (await call(`${server.url}/v1/pets`, key)).headers.get('ratelimit-policy') ?? '';
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(policy).toContain('"minute";q=300'); // within the key cache's 5 s
    expect(await server.stop()).toBe(0); // a graceful stop writes the usage it counted

    const usage = JSON.parse((await keysCommand(databasePath, 'usage', id, '--json')).stdout);
    const today = new Date().toISOString().slice(0, 10);
    expect(usage.days).toEqual([{ date: today, admitted: expect.any(Number), limited: 0, banned: 0 }]);
    expect(usage.days[0].admitted).toBeGreaterThanOrEqual(5);
    // The stopped server reported what its windows admitted and gave its leases back.
    for (const window of usage.windows)
      expect(window).toMatchObject({ used: usage.days[0].admitted, reserved: 0 });
    expect(usage.windows[0]).toMatchObject({ name: 'minute', limit: 300 });
    expect(usage.bannedUntil).toBeNull();
    const text = (await keysCommand(databasePath, 'usage', id)).stdout;
    expect(text).toMatch(/^WINDOW +LIMIT +USED +RESERVED +REMAINING +RESETS$/m);
    expect(text).toMatch(new RegExp(`^${today} +${usage.days[0].admitted} +0 +0$`, 'm'));
    expect(text).toContain('Not banned.');
  });

  it('update keeps the limits of an enterprise key unless new ones are given, and clears a label with ""', async () => {
    const databasePath = tempDatabase();
    const { id } = await createKey(
      serverDist,
      { DATABASE_URL: databasePath },
      ...enterprise(5, 50),
      '--label',
      'x',
    );
    const kept = JSON.parse((await keysCommand(databasePath, 'update', id, '--label', '', '--json')).stdout);
    expect(kept).toMatchObject({ plan: 'enterprise', perMinute: 5, perDay: 50, label: null });
    const raised = JSON.parse(
      (await keysCommand(databasePath, 'update', id, '--per-minute', '9', '--per-day', '90', '--json'))
        .stdout,
    );
    expect(raised).toMatchObject({ perMinute: 9, perDay: 90 });
  });

  it.each([
    [['update', '000000000000', '--plan', 'pro'], /no active key with id 000000000000/],
    [['usage', '000000000000'], /no key with id 000000000000/],
    [['usage', 'x', '--from', '2026-02-30'], /must be a day written YYYY-MM-DD/],
  ])('when run with %j, then it fails with a clear message', async (args, message) => {
    const databasePath = tempDatabase();
    await createKey(serverDist, { DATABASE_URL: databasePath }, '--plan', 'free');
    await expect(keysCommand(databasePath, ...args)).rejects.toMatchObject({
      stderr: expect.stringMatching(message),
    });
  });

  it('update disables a key and enables it again, and sets and clears its expiry: list and the running server follow', async () => {
    const databasePath = tempDatabase();
    const created = JSON.parse(
      (await keysCommand(databasePath, 'create', '--plan', 'free', '--json')).stdout,
    );
    const server = await start({ DATABASE_URL: databasePath, NODE_ENV: 'production' });
    const code = async () => {
      const res = await call(`${server.url}/v1/pets`, created.key);
      return res.status === 200 ? 'ok' : ((await res.json()) as { code: string }).code;
    };
    expect(await code()).toBe('ok');
    const disabled = await keysCommand(databasePath, 'update', created.id, '--disable');
    expect(disabled.stdout).toMatch(/disabled since \d{4}-/);
    const state = async () =>
      (await keysCommand(databasePath, 'list')).stdout.split('\n').find((l) => l.startsWith(created.id));
    expect(await state()).toMatch(/ disabled since \d{4}-\S+ /);
    await expect.poll(code, { timeout: 10_000, interval: 250 }).toBe('key_disabled'); // the key cache's 5 s, and room
    await keysCommand(databasePath, 'update', created.id, '--enable');
    expect(await state()).toMatch(/ active /);
    await expect.poll(code, { timeout: 10_000, interval: 250 }).toBe('ok');

    const at = new Date(Date.now() + 86_400_000).toISOString();
    const expiring = await keysCommand(databasePath, 'update', created.id, '--expires-at', at, '--json');
    expect(JSON.parse(expiring.stdout)).toMatchObject({ expiresAt: at, disabledAt: null });
    const refused = await keysCommand(
      databasePath,
      'update',
      created.id,
      '--expires-at',
      '2020-01-01T00:00:00Z',
    ).then(
      () => undefined,
      (error: { stderr: string }) => error.stderr,
    );
    expect(refused).toMatch(/--expires-at.*must be in the future/);
    // A day the calendar does not have, or an instant without its seconds, is refused, as the admin API
    // (RFC 3339 date-time) refuses it: 2027-02-30 is not taken as 2 March.
    for (const unreal of [
      '2027-02-30T00:00:00Z',
      '2027-04-31T12:00:00Z',
      '2027-01-01T24:00:00Z',
      '2027-01-31T00:00Z',
    ]) {
      const answer = await keysCommand(databasePath, 'update', created.id, '--expires-at', unreal).then(
        () => 'taken',
        (error: { stderr: string }) => error.stderr,
      );
      expect(answer, unreal).toMatch(/--expires-at.*must be a real instant written ISO 8601/);
    }
    const listed = JSON.parse((await keysCommand(databasePath, 'list', '--json')).stdout) as { id: string }[];
    expect(listed.find((key) => key.id === created.id)).toMatchObject({ expiresAt: at });
    const cleared = await keysCommand(databasePath, 'update', created.id, '--expires-at', '', '--json');
    expect(JSON.parse(cleared.stdout)).toMatchObject({ expiresAt: null });
  });

  it('update refuses limits for a fixed plan, and a revoked key', async () => {
    const databasePath = tempDatabase();
    const { id } = await createKey(serverDist, { DATABASE_URL: databasePath }, '--plan', 'free');
    await expect(keysCommand(databasePath, 'update', id, '--per-minute', '5')).rejects.toMatchObject({
      stderr: expect.stringMatching(/apply to enterprise keys only/),
    });
    await keysCommand(databasePath, 'revoke', id);
    await expect(keysCommand(databasePath, 'update', id, '--plan', 'pro')).rejects.toMatchObject({
      stderr: expect.stringMatching(/no active key/),
    });
  });
});

describe('pnpm keys builds only when it must (scripts/fresh-build.mjs)', () => {
  it('builds when the command is missing or a source is newer than it, and not otherwise', async () => {
    const script = new URL('../../../../scripts/fresh-build.mjs', import.meta.url).href;
    const { isStale } = (await import(script)) as { isStale: (root: string) => boolean };
    const root = mkdtempSync(join(tmpdir(), 'fresh-build-'));
    const file = (path: string, seconds: number) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), '');
      utimesSync(join(root, path), seconds, seconds);
      for (let dir = dirname(join(root, path)); dir.startsWith(root); dir = dirname(dir))
        utimesSync(dir, 0, 0);
    };
    file('apps/server/src/cli/keys.ts', 1_000);
    file('spec/openapi/openapi.yaml', 1_000);
    expect(isStale(root)).toBe(true); // never built
    file('apps/server/dist/cli/keys.js', 2_000);
    expect(isStale(root)).toBe(false);
    file('spec/admin/openapi.yaml', 3_000); // a contract changed after the build
    expect(isStale(root)).toBe(true);
    file('apps/server/dist/cli/keys.js', 4_000);
    expect(isStale(root)).toBe(false);
    file('apps/server/src/store/store.ts', 5_000);
    expect(isStale(root)).toBe(true);
  });
});

describe('pnpm start and pnpm keys stop when the install is missing or stale (scripts/installed.mjs)', () => {
  it('says so in one line when node_modules is missing or older than pnpm-lock.yaml, and nothing otherwise', async () => {
    const script = new URL('../../../../scripts/installed.mjs', import.meta.url).href;
    const { installProblem } = (await import(script)) as {
      installProblem: (root: string) => string | undefined;
    };
    const root = mkdtempSync(join(tmpdir(), 'installed-'));
    const file = (path: string, seconds: number) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), '');
      utimesSync(join(root, path), seconds, seconds);
    };
    file('pnpm-lock.yaml', 1_000);
    expect(installProblem(root)).toMatch(
      /^No dependencies installed: run npx -y -p node@24 -p pnpm@10 -c 'pnpm install --frozen-lockfile' first\.$/,
    );
    file('node_modules/.modules.yaml', 2_000);
    expect(installProblem(root)).toBeUndefined();
    file('pnpm-lock.yaml', 3_000); // a checkout changed the dependencies
    expect(installProblem(root)).toMatch(/^The dependencies changed since the last install/);
  });
});
