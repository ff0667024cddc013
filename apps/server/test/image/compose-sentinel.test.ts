// compose.sentinel.yaml on top of compose.yaml, as docs/compose.md has an operator run it
// (support/compose.ts): the instances follow the primary three Sentinels name, through a failover and back.
import { podman } from '@animal-store/test-support';
import { describe, expect, it, vi } from 'vitest';
import { composeUp, podmanCompose } from '../support/compose.js';
import { image, imageBuiltBeforeAll, obedientlyAdmitted } from '../support/image.js';
import { heldWithin } from '../support/waits.js';

imageBuiltBeforeAll();

describe.runIf(image && podmanCompose)('compose.yaml with compose.sentinel.yaml', () => {
  it('with compose.sentinel.yaml on top: the instances follow the primary three Sentinels name, through a failover and back, and the limit stays exact', async () => {
    const deployment = await composeUp('sentinel', ['compose.sentinel.yaml']);
    const { url, compose } = deployment;
    await deployment.shown(async () => {
      // Asked of a Sentinel straight (podman-compose's exec adds lines of its own to what it prints).
      const sentinel = (...args: string[]) =>
        podman('exec', deployment.container('sentinel-1'), 'redis-cli', '-p', '26379', 'sentinel', ...args);
      const primary = async () => (await sentinel('get-master-addr-by-name', 'animal-store')).split('\n')[0];
      expect(await primary()).toBe('redis');
      await deployment.warmKey();
      expect(await obedientlyAdmitted([url], await deployment.keyInService('--plan', 'free'), 100)).toBe(60);
      // The error lines logged so far: the warm-up's 503s on a loaded machine (see warmKey) are the service
      // working. A failover must add none.
      const errorLines = (logs: string) => logs.split('\n').filter((line) => line.includes('"level":50'));
      const errorsBefore = errorLines(await compose('logs', 'instance-a', 'instance-b'));
      // redis-cli exits 0 on an error reply: the Sentinel's answer is read, and the failover asked again
      // while it has no replica it would promote yet (NOGOODSLAVE: its view of the replica is refreshed every
      // 10 s, and a loaded machine can leave it stale), as an operator would. Each instance is off Redis for
      // the failover, then on the new primary (docs/scaling-out.md): `reachable` lines in all so far.
      // A Sentinel starved of the CPU for 2 s (a loaded machine) enters TILT for 30 s and fails nothing
      // over meanwhile (Redis's Sentinel docs): a failover is asked once none is in it, so that the time
      // measured is the failover's own.
      const sentinels = ['sentinel-1', 'sentinel-2', 'sentinel-3'].map((s) => deployment.container(s));
      const tilted = async () =>
        (
          await Promise.all(
            sentinels.map((name) => podman('exec', name, 'redis-cli', '-p', '26379', 'info', 'sentinel')),
          )
        ).some((info) => /sentinel_tilt:1/.test(info));
      const failover = async (from: string, reachable: number) => {
        await expect
          .poll(tilted, { timeout: 45_000, interval: 500, message: 'a Sentinel stayed in TILT for 45 s' })
          .toBe(false);
        const answers: string[] = [];
        let okAt = Date.now();
        const moved = async () => {
          if ((await primary()) !== from) return;
          // Asked again after an OK too when the failover it started was aborted (the Sentinel found no
          // replica good enough: on a doubly loaded machine the old primary, made a replica a moment
          // before, was not yet synced, and Sentinel logged -failover-abort-no-good-slave): no failover
          // in progress, and the primary unmoved.
          const aborted =
            answers.at(-1) === 'OK' &&
            !/failover_in_progress/.test(await sentinel('master', 'animal-store')) &&
            (await primary()) === from;
          if (answers.at(-1) !== 'OK' || aborted) {
            answers.push(await sentinel('failover', 'animal-store'));
            okAt = Date.now();
          }
          throw new Error(`no failover; SENTINEL FAILOVER answered: ${answers.join(' | ')}`);
        };
        await vi.waitFor(moved, { timeout: 60_000, interval: 500 }).catch(async (error: Error) => {
          const log = await podman('logs', '--tail', '40', deployment.container('sentinel-1')).catch(String);
          throw new Error(
            `${error.message}\n--- ${await sentinel('replicas', 'animal-store')}\n--- sentinel-1:\n${log}`,
          );
        });
        const movedMs = Date.now() - okAt; // from the failover the Sentinel took to the new primary named
        const saidReachable = async () =>
          ((await compose('logs', 'instance-a', 'instance-b')).match(/Redis reachable again/g)?.length ??
            0) >= reachable;
        await heldWithin(saidReachable, { timeout: 20_000, interval: 500 });
        const logs = await compose('logs', 'instance-a', 'instance-b');
        expect(logs.match(/Redis reachable again/g)?.length).toBe(reachable);
        expect(errorLines(logs).filter((line) => !errorsBefore.includes(line))).toEqual([]);
        return movedMs;
      };
      // Over and back, twice in a row: each within 20 s, well within the failover timeout (30 s; a failover back
      // to `redis` ran all of it while the replicas were known by address and the primary by name).
      const names = ['redis', 'redis-replica'];
      for (let n = 0; n < 4; n++) {
        expect(await failover(names[n % 2] as string, 2 * (n + 1)), `failover ${n + 1}`).toBeLessThan(20_000);
        expect(await primary()).toBe(names[(n + 1) % 2]); // each named by its service (replica-announce-ip)
      }
      expect(await obedientlyAdmitted([url], await deployment.keyInService('--plan', 'free'), 100)).toBe(60);
    });
    await deployment.down();
    expect(await deployment.leftBehind()).toEqual(['', '', '']);
  }, 300_000);
});
