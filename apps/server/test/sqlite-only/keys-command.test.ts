// The operators' key command (the built cli/keys.js, as `pnpm keys` runs it) against a real database and a
// running server: create, list, revoke, rotate, unban, and its refusals (plans and usage: keys-plans.test.ts).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createKey, enterprise } from '@animal-store/test-support';
import { describe, expect, it } from 'vitest';
import { call, keysOn, processesStoppedAfterEach, serverDist, tempDatabase } from '../support/harness.js';
import { heldWithin } from '../support/waits.js';

/** That the server refuses `key` (401) within 5 s: how long it may answer a changed key from memory. */
async function refusedWithin(url: string, key: string): Promise<void> {
  const status = async () => (await call(`${url}/v1/pets`, key)).status;
  await expect.poll(status, { timeout: 5_500, interval: 250 }).toBe(401);
}

const start = processesStoppedAfterEach();

describe('pnpm keys', () => {
  it('creates, lists and revokes keys on the server database', async () => {
    const databasePath = tempDatabase();
    const created = JSON.parse(
      (await keysOn(databasePath, 'create', ...enterprise(5, 50), '--label', 'acme', '--json')).stdout,
    );
    expect(created).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f]{12}$/),
      plan: 'enterprise',
      perMinute: 5,
      perDay: 50,
      label: 'acme',
    });
    expect(created.key).toMatch(new RegExp(`^as_${created.id}_`));

    const listed = JSON.parse((await keysOn(databasePath, 'list', '--json')).stdout);
    expect(listed).toEqual([expect.objectContaining({ id: created.id, revokedAt: null })]);
    expect(JSON.stringify(listed)).not.toContain(created.key);
    const [header, row] = (await keysOn(databasePath, 'list')).stdout.trimEnd().split('\n');
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
    expect((await keysOn(databasePath, 'revoke', created.id)).stdout).toContain(`Revoked key ${created.id}`);
    await refusedWithin(server.url, created.key); // within the key cache's 5 s
    expect(JSON.parse((await keysOn(databasePath, 'list', '--json')).stdout)[0].revokedAt).toEqual(
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
    await expect(keysOn(tempDatabase(), ...args)).rejects.toMatchObject({
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
    const [listed] = JSON.parse((await keysOn(databasePath, 'list', '--json')).stdout);
    expect(listed).toMatchObject({ id, lastUsedAt: expect.any(String), bannedUntil: expect.any(String) });
    expect(Date.parse(listed.bannedUntil)).toBeGreaterThan(Date.now() + 800_000);
    expect((await keysOn(databasePath, 'list')).stdout).toContain('banned until');

    expect((await keysOn(databasePath, 'unban', id)).stdout).toContain(`Unbanned key ${id}`);
    expect(JSON.parse((await keysOn(databasePath, 'list', '--json')).stdout)[0].bannedUntil).toBeNull();
    // No longer banned, within the ban cache's 5 s: refused for the minute, which is still spent.
    const code = async () => (await (await call(`${server.url}/v1/pets`, key)).json()).code;
    await expect.poll(code, { timeout: 9_000, interval: 300 }).toBe('rate_limited');
    // --reset minute starts the spent minute over: the running server admits the key again.
    expect((await keysOn(databasePath, 'unban', id, '--reset', 'minute')).stdout).toContain(
      `Unbanned key ${id}; its minute started over`,
    );
    const seen: unknown[] = [];
    const admitted = async () => {
      const res = await call(`${server.url}/v1/pets`, key);
      seen.push(res.status === 200 ? 200 : ((await res.json()) as { code: string }).code);
      return seen.at(-1) === 200;
    };
    await heldWithin(admitted, { timeout: 6_000, interval: 200 });
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
      (await keysOn(databasePath, 'rotate', id, '--grace-seconds', '600', '--json')).stdout,
    );
    expect(graced.key).toMatch(new RegExp(`^as_${id}_`));
    // The end of the grace period the store recorded: 600 s from the rotation.
    expect(Date.parse(graced.previousValidUntil) - Date.now()).toBeGreaterThan(590_000);
    expect(Date.parse(graced.previousValidUntil) - Date.now()).toBeLessThanOrEqual(600_000);
    expect((await call(`${server.url}/v1/pets`, graced.key)).status).toBe(200);
    expect((await call(`${server.url}/v1/pets`, old)).status).toBe(200);
    // The default written out: 0 is accepted, as the help says.
    const now = JSON.parse(
      (await keysOn(databasePath, 'rotate', id, '--grace-seconds', '0', '--json')).stdout,
    );
    expect(now).toMatchObject({ previousValidForSeconds: 0, previousValidUntil: null });
    expect((await call(`${server.url}/v1/pets`, now.key)).status).toBe(200);
    // Another process rotated it: the server's memory of the old secrets lasts at most 5 s.
    await refusedWithin(server.url, graced.key);
    await refusedWithin(server.url, old);
    const [listed] = JSON.parse((await keysOn(databasePath, 'list', '--json')).stdout);
    expect(listed).toMatchObject({ id, plan: 'pro', perMinute: 300, revokedAt: null });
  });

  it('list on a path that does not exist says so and creates nothing', async () => {
    const databasePath = tempDatabase();
    await expect(keysOn(databasePath, 'list')).rejects.toMatchObject({
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
