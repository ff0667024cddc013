// The operators' key command (the built cli/keys.js, as `pnpm keys` runs it) against a real database and a
// running server: plans, limits and usage.
import { createKey, enterprise } from '@animal-store/test-support';
import { describe, expect, it } from 'vitest';
import { call, keysOn, processesStoppedAfterEach, serverDist, tempDatabase } from '../support/harness.js';

const start = processesStoppedAfterEach();

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
      (await keysOn(databasePath, 'update', id, '--plan', 'pro', '--label', 'upgraded', '--json')).stdout,
    );
    expect(updated).toMatchObject({
      id,
      plan: 'pro',
      perMinute: 300,
      perDay: 10_000,
      label: 'upgraded',
      customerId: 'cus_9',
    });
    const policy = async () => (await call(`${server.url}/v1/pets`, key)).headers.get('ratelimit-policy');
    await expect.poll(policy, { timeout: 5_500, interval: 200 }).toContain('"minute";q=300'); // the key cache's 5 s
    expect(await server.stop()).toBe(0); // a graceful stop writes the usage it counted

    const usage = JSON.parse((await keysOn(databasePath, 'usage', id, '--json')).stdout);
    const today = new Date().toISOString().slice(0, 10);
    expect(usage.days).toEqual([{ date: today, admitted: expect.any(Number), limited: 0, banned: 0 }]);
    expect(usage.days[0].admitted).toBeGreaterThanOrEqual(5);
    // The stopped server reported what its windows admitted and gave its leases back.
    for (const window of usage.windows)
      expect(window).toMatchObject({ used: usage.days[0].admitted, reserved: 0 });
    expect(usage.windows[0]).toMatchObject({ name: 'minute', limit: 300 });
    expect(usage.bannedUntil).toBeNull();
    const text = (await keysOn(databasePath, 'usage', id)).stdout;
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
    const kept = JSON.parse((await keysOn(databasePath, 'update', id, '--label', '', '--json')).stdout);
    expect(kept).toMatchObject({ plan: 'enterprise', perMinute: 5, perDay: 50, label: null });
    const raised = JSON.parse(
      (await keysOn(databasePath, 'update', id, '--per-minute', '9', '--per-day', '90', '--json')).stdout,
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
    await expect(keysOn(databasePath, ...args)).rejects.toMatchObject({
      stderr: expect.stringMatching(message),
    });
  });

  it('update disables a key and enables it again, and sets and clears its expiry: list and the running server follow', async () => {
    const databasePath = tempDatabase();
    const created = JSON.parse((await keysOn(databasePath, 'create', '--plan', 'free', '--json')).stdout);
    const server = await start({ DATABASE_URL: databasePath, NODE_ENV: 'production' });
    const code = async () => {
      const res = await call(`${server.url}/v1/pets`, created.key);
      return res.status === 200 ? 'ok' : ((await res.json()) as { code: string }).code;
    };
    expect(await code()).toBe('ok');
    const disabled = await keysOn(databasePath, 'update', created.id, '--disable');
    expect(disabled.stdout).toMatch(/disabled since \d{4}-/);
    const state = async () =>
      (await keysOn(databasePath, 'list')).stdout.split('\n').find((l) => l.startsWith(created.id));
    expect(await state()).toMatch(/ disabled since \d{4}-\S+ /);
    await expect.poll(code, { timeout: 10_000, interval: 250 }).toBe('key_disabled'); // the key cache's 5 s, and room
    await keysOn(databasePath, 'update', created.id, '--enable');
    expect(await state()).toMatch(/ active /);
    await expect.poll(code, { timeout: 10_000, interval: 250 }).toBe('ok');

    const at = new Date(Date.now() + 86_400_000).toISOString();
    const expiring = await keysOn(databasePath, 'update', created.id, '--expires-at', at, '--json');
    expect(JSON.parse(expiring.stdout)).toMatchObject({ expiresAt: at, disabledAt: null });
    const refused = await keysOn(
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
      const answer = await keysOn(databasePath, 'update', created.id, '--expires-at', unreal).then(
        () => 'taken',
        (error: { stderr: string }) => error.stderr,
      );
      expect(answer, unreal).toMatch(/--expires-at.*must be a real instant written ISO 8601/);
    }
    const listed = JSON.parse((await keysOn(databasePath, 'list', '--json')).stdout) as { id: string }[];
    expect(listed.find((key) => key.id === created.id)).toMatchObject({ expiresAt: at });
    const cleared = await keysOn(databasePath, 'update', created.id, '--expires-at', '', '--json');
    expect(JSON.parse(cleared.stdout)).toMatchObject({ expiresAt: null });
  });

  it('update refuses limits for a fixed plan, and a revoked key', async () => {
    const databasePath = tempDatabase();
    const { id } = await createKey(serverDist, { DATABASE_URL: databasePath }, '--plan', 'free');
    await expect(keysOn(databasePath, 'update', id, '--per-minute', '5')).rejects.toMatchObject({
      stderr: expect.stringMatching(/apply to enterprise keys only/),
    });
    await keysOn(databasePath, 'revoke', id);
    await expect(keysOn(databasePath, 'update', id, '--plan', 'pro')).rejects.toMatchObject({
      stderr: expect.stringMatching(/no active key/),
    });
  });
});
