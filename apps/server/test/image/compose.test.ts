// compose.yaml as docs/compose.md has an operator run it (support/compose.ts): its own build of the image,
// and two instances on PostgreSQL and Redis behind nginx, through an instance's stop.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { composeUp, podmanCompose } from '../support/compose.js';
import { image, imageBuiltBeforeAll, obedientlyAdmitted, petsCall, repo } from '../support/image.js';
import { grown, heldWithin } from '../support/waits.js';

imageBuiltBeforeAll();

describe('compose.yaml’s own build of the image', () => {
  it('passes the version and commit the host names, each as the Containerfile reads it; its page sets them, and the format that keeps the health check', () => {
    // `build: .` passed none: the image said `<release>+unknown`, and podman's OCI format dropped HEALTHCHECK.
    const composeFile = readFileSync(`${repo}compose.yaml`, 'utf8');
    const args =
      /\n {2}build:\n {4}context: \.\n {4}args:\n((?: {6}\w+: .*\n)+)/.exec(composeFile)?.[1] ?? '';
    const passed = [...args.matchAll(/(\w+): \$\{(\w+):-\}/g)].map(([, arg, variable]) => [arg, variable]);
    const read = new Set(
      [...readFileSync(`${repo}Containerfile`, 'utf8').matchAll(/^ARG (BUILD_\w+)$/gm)].map(([, arg]) => arg),
    );
    expect(passed).toEqual([...read].map((arg) => [arg, arg]));
    const page = readFileSync(`${repo}docs/compose.md`, 'utf8');
    expect(page).toContain(
      'export BUILD_VERSION=$(node apps/server/scripts/build-info.mjs --print) BUILD_REVISION=$(git rev-parse HEAD)',
    );
    expect(page).toContain('BUILDAH_FORMAT=docker podman-compose up -d');
  });
});

describe.runIf(image && podmanCompose)('compose.yaml', () => {
  it('comes up in one command: two instances on PostgreSQL and Redis behind nginx, a key made inside a service, its limit exact through the proxy, no request lost when an instance stops, and nothing left after down', async () => {
    const deployment = await composeUp('one');
    const { url, compose } = deployment;
    await deployment.shown(async () => {
      const writerKey = await deployment.warmKey();
      // The keys command inside a service, as the docs show it.
      const key = await deployment.keyInService('--plan', 'free');
      // The free plan's 60 a minute, exactly, over both instances behind the proxy.
      expect(await obedientlyAdmitted([url], key, 100)).toBe(60);
      const logs = await compose('logs', 'instance-a', 'instance-b');
      expect(logs.match(/"backend":"postgres\+redis"/g)?.length).toBeGreaterThanOrEqual(2);
      expect(logs).not.toContain(deployment.password);
      // The admin listener on its own port, on the host's loopback.
      const admin = await fetch(`${deployment.adminUrl}/admin/v1/keys`, {
        headers: { authorization: `Bearer ${deployment.adminToken}` },
      });
      expect(admin.status).toBe(200);

      // Writers through the proxy while one instance stops and starts again, at another address: every
      // create answered 201 and every one stored. The proxy follows it (its watcher reloads nginx): requests
      // reach it again, and once they do none waits out the proxy's 1 s connect timeout.
      const served = async () => (await compose('logs', 'instance-b')).match(/"statusCode":/g)?.length ?? 0;
      let writing = true;
      let timed = false;
      const answers: number[] = [];
      const slow: number[] = [];
      // Each create as a careful client sends it: with an Idempotency-Key, sent again under that key when its
      // kept-alive connection was closed under it with no answer (nginx's reload closes its old workers'
      // idle connections, as any nginx reload does: docs/compose.md). So nothing is lost or made twice.
      const create = async (body: string) => {
        const idempotencyKey = randomBytes(16).toString('hex');
        for (let attempt = 0; ; attempt++) {
          const status = await petsCall(url, writerKey, { method: 'POST', body, idempotencyKey }).then(
            (r) => r.status,
            () => 0,
          );
          if (status !== 0 || attempt === 2) return status;
        }
      };
      const writers = Array.from({ length: 4 }, async (_, n) => {
        for (let i = 0; writing; i++) {
          const [started, measured] = [Date.now(), timed];
          answers.push(await create(JSON.stringify({ name: `Compose ${n}-${i}`, categoryId: 1 })));
          if (measured && Date.now() - started >= 1_000) slow.push(Date.now() - started);
        }
      });
      // Each step waits for the writers' answers to go on through it: 8 before the stop, 20 while
      // instance-b is down, 40 after it came back.
      const answered = (n: number, what: string, timeout = 30_000) =>
        grown(() => answers.length, n, { timeout, what });
      await answered(8, 'before the stop');
      await compose('stop', 'instance-b');
      await answered(20, 'while instance-b was stopped');
      let before = await served();
      await compose('start', 'instance-b');
      if (!(await heldWithin(async () => (await served()) - before >= 2, { timeout: 60_000, interval: 500 })))
        throw new Error('instance-b never served again through the proxy');
      timed = true;
      before = await served();
      await answered(40, 'creates after instance-b came back, in 90 s', 90_000);
      const byB = (await served()) - before;
      writing = false;
      await Promise.all(writers);
      expect(answers.filter((s) => s !== 201)).toEqual([]);
      expect(slow).toEqual([]);
      expect(byB).toBeGreaterThanOrEqual(10); // round robin: about half
      const stored = await compose(
        'exec',
        'postgres',
        'psql',
        '-U',
        'postgres',
        '-d',
        'animal_store',
        '-P',
        'pager=off', // podman-compose's exec gives it a terminal: psql would page its answer
        '-Atc',
        "SELECT count(*) FROM pets WHERE name LIKE 'Compose %'",
      );
      expect(Number(/^\s*(\d+)\s*$/m.exec(stored)?.[1])).toBe(answers.length);
    });
    await deployment.down();
    expect(await deployment.leftBehind()).toEqual(['', '', '']);
  }, 300_000);
});
