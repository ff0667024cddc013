// docs/upgrading.md rehearsed: a deployment of each earlier release (built from its commit on the Node.js
// it ran on: releases.ts) rolled to this release under load, and rolled back, as the page says. Its keys
// are made with the old release's keys command. Two loops write pets, and one spends a limited key,
// through whichever instances serve at the moment (a load balancer's view: an instance is taken out of
// it before it is stopped, and put in once ready). Nothing written is lost and no request fails; the
// limited key (its day spent while old and new serve side by side) is admitted exactly its limit once
// every instance runs this release, and nothing more after the rollback.
// - every later one (1.1, 2.0, 2.1, 2.2, …): two instances on PostgreSQL + Redis, rolled one at a time (start one, stop one).
// - 1.0: one instance on SQLite (1.0 has no other store), stopped and started again on the same file;
//   the requests refused in between are sent again (nothing was sent). With no load balancer to take the
//   instance out first, a request may meet a reset as the instance stops (docs/running.md, Shutdown): it
//   must be one the instance never read, so nothing it asked for was done.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { freshStore } from '../support/backends.js';
import { processesStoppedAfterEach } from '../support/harness.js';
import { earlierReleases, type OldRelease, oldRelease, startRelease } from '../support/releases.js';
import { type Instance, noBans, perDay, rehearse, roll, settle } from '../support/rolling-load.js';

const startNew = processesStoppedAfterEach();
const running: { stop: () => Promise<number | null> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

/** `release`'s server on `env` (stopped after the test). */
async function startOld(release: OldRelease, env: Record<string, string>): Promise<Instance> {
  const { url, stop } = await startRelease(release, env);
  running.push({ stop });
  return { release: release.version, url, stop };
}

/** This release's server on `env` (stopped after the test). */
async function startCurrent(env: Record<string, string>): Promise<Instance> {
  const { url, stop } = await startNew(env);
  return { release: 'current', url, stop };
}

/** A key made by `release`'s keys command, as an operator of that release made it. */
async function oldKey(release: OldRelease, env: Record<string, string>, perMinute: number, perDay: number) {
  const { stdout } = await promisify(execFile)(
    release.node,
    [
      release.keys,
      'create',
      '--plan',
      'enterprise',
      '--per-minute',
      `${perMinute}`,
      '--per-day',
      `${perDay}`,
      '--json',
    ],
    { env: { PATH: process.env.PATH ?? '', ...env } },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) as string).key as string;
}

// Built once per machine (about a minute each), hence the long timeouts.
const built = Object.fromEntries(earlierReleases.map((version) => [version, oldRelease(version)]));

describe('an upgrade from every earlier release, under load, and back (docs/upgrading.md)', () => {
  it('has a row in docs/upgrading.md for each of them, and a rehearsal below', () => {
    const page = readFileSync(new URL('../../../../docs/upgrading.md', import.meta.url), 'utf8');
    const rows = [...page.matchAll(/^\| (\d+\.\d+) +\|/gm)].map(([, minor]) => minor);
    expect(rows).toEqual(earlierReleases.map((version) => version.replace(/\.\d+$/, '')));
    expect(earlierReleases[0]).toBe('1.0.0'); // the one on SQLite, below; every other one on PostgreSQL
  });

  it.each(earlierReleases.filter((version) => version !== '1.0.0'))(
    'from %s on PostgreSQL + Redis: one instance at a time to this release and back; nothing lost, no request failed, the limit exact',
    { timeout: 240_000 },
    async (version) => {
      const release = built[version];
      if (!release) return; // releases.ts said why
      const store = await freshStore('postgres+redis');
      const env = { ...store, NODE_ENV: 'production', LOG_LEVEL: 'warn', ...noBans };
      const serving = [await startOld(release, env), await startOld(release, env)];
      const writerKey = await oldKey(release, env, 1_000_000, 10_000_000);
      const limitedKey = await oldKey(release, env, perDay, perDay);
      const { resets } = await rehearse(
        { serving, store, writerKey, limitedKey },
        async () => {
          await roll(serving, () => startCurrent(env), 2);
          expect(serving.map((s) => s.release)).toEqual(['current', 'current']);
        },
        () => roll(serving, () => startOld(release, env), 2),
      );
      expect(resets).toEqual([]);
    },
  );

  it('from 1.0.0 on SQLite: stopped, this release started on the same file, and back; nothing lost, nothing done for a request reset, the limit exact', {
    timeout: 240_000,
  }, async () => {
    const release = built['1.0.0'];
    if (!release) return; // releases.ts said why
    const store = await freshStore('sqlite');
    // 1.0 logs its listening line at info
    const env = { ...store, NODE_ENV: 'production', ...noBans };
    const serving = [await startOld(release, env)];
    const writerKey = await oldKey(release, env, 1_000_000, 10_000_000);
    const limitedKey = await oldKey(release, env, perDay, perDay);
    /** Stops the one instance (a clean exit), then starts `next` on the same file. */
    const restart = async (next: () => Promise<Instance>) => {
      expect(await (serving[0] as Instance).stop()).toBe(0);
      serving[0] = await next();
      await settle();
    };
    const { resets, storedNames } = await rehearse(
      { serving, store, writerKey, limitedKey },
      () => restart(() => startCurrent(env)),
      () => restart(() => startOld(release, env)),
    );
    // A request a stop closed the connection under was never read: what it asked for was not done (and a
    // limited one was not counted: the limit stays exact).
    expect(resets.filter(({ name }) => name && storedNames.has(name))).toEqual([]);
  });
});
