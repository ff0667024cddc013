// The container image (Containerfile at the root), built unchanged and run with podman as an operator
// runs it (docs/container.md): on SQLite with a volume and a read-only root, stopped by `podman stop` with
// nothing lost, its data kept across a new container (which serves the console on its admin listener); a
// SQLite file moved into it; two containers on the host's PostgreSQL and Redis through the environment,
// sharing one key's limit exactly; and a rolling upgrade from the newest release's image and back
// (docs/upgrading.md). The official base image is stood in for locally under its own name (no registry is
// reachable here: test-support's containers.ts).
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  createKey,
  enterprise,
  freePort,
  podman,
  podmanEnv,
  standInNodeImage,
  standInServiceImages,
  toolFor,
} from '@animal-store/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore, processesStoppedAfterEach, serverDist, tempDatabase } from '../support/harness.js';
import { type EarlierVersion, earlierReleases, releaseCommit } from '../support/releases.js';
import { type Instance, noBans, perDay, rehearse, roll } from '../support/rolling-load.js';

const repo = fileURLToPath(new URL('../../../../', import.meta.url));
const containerfile = readFileSync(`${repo}Containerfile`, 'utf8');
// The version this checkout's build reports, as docs/container.md has the host pass it in: between
// releases `<release>+<commit>`, the commit the image was built from.
const { buildVersion } = (await import(`${repo}apps/server/scripts/build-info.mjs`)) as {
  buildVersion: (dir?: string, given?: string) => string;
};
const version = buildVersion(undefined, '');
const revision = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
const image = `localhost/animal-store:test-${process.pid}`;
const run = promisify(execFile);
const startProcess = processesStoppedAfterEach();
const available = toolFor('the container image', 'podman');
const names: string[] = []; // containers and volumes, removed after the file
const named = (what: string) => {
  const name = `animal-store-test-${process.pid}-${what}`;
  names.push(name);
  return name;
};

beforeAll(async () => {
  if (!available) return;
  await standInNodeImage(/^ARG NODE_IMAGE=(\S+)$/m.exec(containerfile)?.[1] as string);
  const ca = process.env.NODE_EXTRA_CA_CERTS;
  // The registry's CA, where this machine names one (docs/container.md: behind a TLS-intercepting proxy).
  const caArgs = ca
    ? ['-v', `${ca}:/tmp/extra-ca.pem:ro`, '--build-arg', 'NODE_EXTRA_CA_CERTS=/tmp/extra-ca.pem']
    : [];
  await podman(
    'build',
    '--pull=never',
    '--format',
    'docker',
    ...caArgs,
    '--build-arg',
    `BUILD_VERSION=${version}`,
    '--build-arg',
    `BUILD_REVISION=${revision}`,
    '-t',
    image,
    repo,
  );
}, 600_000);

afterAll(async () => {
  if (!available) return;
  for (const name of names) {
    await podman('rm', '--force', '--time', '0', name).catch(() => {});
    await podman('volume', 'rm', '--force', name).catch(() => {});
  }
  await podman('rmi', '--force', image).catch(() => {});
  // The build stage's image, left untagged by every build (823 MB each): not kept from run to run.
  await podman('image', 'prune', '--force').catch(() => {});
});

/** Runs this checkout's image detached on the host's network with `env`; its URL. */
const runImage = (name: string, env: Record<string, string>, ...options: string[]) =>
  runImageOf(image, name, env, ...options);

/** Runs `imageName` detached on the host's network with `env`; its URL, once ready. */
async function runImageOf(
  imageName: string,
  name: string,
  env: Record<string, string>,
  ...options: string[]
) {
  const port = await freePort();
  const vars = Object.entries({ PORT: String(port), ...env }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  await podman('run', '--detach', '--name', name, ...vars, ...options, imageName);
  const url = `http://${env.HOST === '::1' ? '[::1]' : '127.0.0.1'}:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const up = await fetch(`${url}/readyz`).then(
      (res) => res.ok,
      () => false,
    );
    if (up) return url;
    if (Date.now() > deadline) throw new Error(`${name} never became ready:\n${await podman('logs', name)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A key created inside the container, with the image's own `animal-store-keys`. */
const keyInside = async (name: string, ...args: string[]) =>
  (
    JSON.parse(await podman('exec', name, 'animal-store-keys', 'create', '--json', ...args)) as {
      key: string;
    }
  ).key;

// Bounded: a request nobody answers fails in 30 s, where fetch's own wait (5 minutes for the headers) outlasted
// the test's timeout and hid which step hung.
const petsCall = (url: string, key: string, init: RequestInit & { idempotencyKey?: string } = {}) =>
  fetch(`${url}/v1/pets${init.method === 'POST' ? '' : '?limit=100'}`, {
    signal: AbortSignal.timeout(30_000),
    ...init,
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      ...(init.idempotencyKey && { 'idempotency-key': init.idempotencyKey }),
    },
  });

/**
 * What an obedient client gets of `key` in `attempts` requests, round-robin over `urls`: a 429 that asks
 * 1 s at most (points held by another instance) is waited out; one that asks more means the window is used.
 */
async function obedientlyAdmitted(urls: string[], key: string, attempts: number): Promise<number> {
  let admitted = 0;
  for (let i = 0; i < attempts; i++) {
    const res = await petsCall(urls[i % urls.length] as string, key);
    if (res.status === 200) admitted++;
    else if (res.status !== 429) expect(res.status, await res.text()).toBe(200);
    else if (Number(res.headers.get('retry-after')) > 1) break;
    else await new Promise((r) => setTimeout(r, 1_000));
  }
  return admitted;
}

describe.runIf(available)('the container image', () => {
  it('is labelled with the version of the commit it was built from, says it on --version, runs as the node user by number (runAsNonRoot can verify it), and checks its health without curl', async () => {
    const [inspected] = JSON.parse(await podman('image', 'inspect', image)) as {
      Labels: Record<string, string>;
      Size: number;
      Config: { User: string; Volumes?: Record<string, unknown> | null; Env: string[]; Cmd?: string[] };
      Healthcheck?: { Test: string[] };
    }[];
    expect(inspected?.Labels['org.opencontainers.image.version']).toBe(version);
    expect(inspected?.Labels['org.opencontainers.image.revision']).toBe(revision);
    expect(inspected?.Labels['org.opencontainers.image.source']).toMatch(/^https:\/\//);
    expect(Object.keys(inspected?.Config.Volumes ?? {})).toEqual([]); // no anonymous volume left behind
    expect(inspected?.Config.Env).toContain('NODE_OPTIONS=--disable-sigusr1');
    expect(inspected?.Size).toBeLessThan(354e6); // 2.2.0's image: 354 MB
    expect((await podman('run', '--rm', image, 'animal-store-server', '--version')).trim()).toBe(version);
    expect(inspected?.Config.User).toBe('1000:1000');
    // Node with --disable-sigusr1 on its command line, whatever NODE_OPTIONS an operator sets.
    expect(inspected?.Healthcheck?.Test.join(' ')).toContain(
      'node --disable-sigusr1 /app/bin/animal-store-server.js --healthcheck',
    );
    expect(inspected?.Config.Cmd?.slice(0, 2)).toEqual(['node', '--disable-sigusr1']);
    expect(inspected?.Healthcheck?.Test.join(' ')).not.toContain('curl');
    process.stdout.write(`container image: ${Math.round((inspected?.Size ?? 0) / 1e6)} MB\n`);
  });

  it('carries a CycloneDX SBOM at /app/sbom.cdx.json naming express and better-sqlite3 at their versions; no npm; one platform binary', async () => {
    const sbom = JSON.parse(await podman('run', '--rm', image, 'cat', '/app/sbom.cdx.json')) as {
      bomFormat: string;
      components: { name: string; version: string }[];
    };
    expect(sbom.bomFormat).toBe('CycloneDX');
    const installed = (name: string) =>
      (
        JSON.parse(readFileSync(`${repo}node_modules/.pnpm/node_modules/${name}/package.json`, 'utf8')) as {
          version: string;
        }
      ).version;
    for (const name of ['express', 'better-sqlite3'])
      expect(sbom.components.map((c) => `${c.name}@${c.version}`)).toContain(`${name}@${installed(name)}`);
    const inside = await podman(
      'run',
      '--rm',
      image,
      'sh',
      '-c',
      'command -v npm npx corepack; ls /app/node_modules/.pnpm/better-sqlite3@*/node_modules/better-sqlite3/prebuilds',
    );
    expect(inside.trim().split('\n')).toEqual([`linux-${process.arch}.node`]);
  });

  it('with HOST=::1 its health check still finds it, and SIGUSR1 opens no inspector, NODE_OPTIONS of its own or not', async () => {
    const name = named('ipv6');
    // An operator's NODE_OPTIONS replaces the image's whole (it held --disable-sigusr1, and 9229 opened).
    await runImage(name, { HOST: '::1', DATABASE_URL: ':memory:', NODE_OPTIONS: '--max-old-space-size=256' });
    await podman('healthcheck', 'run', name); // throws unless healthy
    await podman('kill', '--signal', 'USR1', name);
    await new Promise((r) => setTimeout(r, 500));
    await podman('healthcheck', 'run', name); // still running, still healthy
    expect(await podman('logs', name)).not.toContain('Debugger listening');
  });

  it('on SQLite with a volume and a read-only root: keys made inside, pets through the port, a stop that drains, data kept', async () => {
    const volume = named('data');
    await podman('volume', 'create', volume);
    const first = named('sqlite-1');
    const url = await runImage(first, {}, '--read-only', '-v', `${volume}:/var/lib/animal-store`);
    const top = await podman('top', first, 'pid', 'user', 'args');
    expect(top).toMatch(/^\s*1\s+node\s+node /m); // Node is PID 1, as the node user
    await podman('healthcheck', 'run', first); // throws unless healthy
    const key = await keyInside(
      first,
      '--plan',
      'enterprise',
      '--per-minute',
      '100000',
      '--per-day',
      '1000000',
    );

    // Requests in flight when `podman stop` comes: each answered (201, or 503 while draining), or refused
    // before it was read.
    const acknowledged: number[] = [];
    const others: number[] = [];
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; i < 1_000; i++) {
        const res = await petsCall(url, key, {
          method: 'POST',
          body: JSON.stringify({ name: `pet-${w}-${i}`, categoryId: 1 }),
        }).catch(() => undefined);
        if (!res) return;
        if (res.status === 201) acknowledged.push(((await res.json()) as { id: number }).id);
        else if (res.status !== 503) others.push(res.status);
      }
    });
    await new Promise((r) => setTimeout(r, 300));
    const since = Date.now();
    await podman('stop', '--time', '15', first);
    const stoppedMs = Date.now() - since;
    await Promise.all(writers);
    expect(await podman('inspect', first, '--format', '{{.State.ExitCode}}')).toBe('0');
    expect(stoppedMs).toBeLessThan(11_000); // SHUTDOWN_GRACE_SECONDS (10) + 1 s, not podman's kill
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(others).toEqual([]);

    // A new container on the same volume, with the admin listener: the key and every acknowledged pet are
    // there, and the console is served with its assets.
    const second = named('sqlite-2');
    const adminPort = await freePort();
    const admin = { ADMIN_PORT: String(adminPort), ADMIN_TOKENS: 'i'.repeat(40) };
    const again = await runImage(second, admin, '--read-only', '-v', `${volume}:/var/lib/animal-store`);
    const page = await fetch(`http://127.0.0.1:${adminPort}/console/`);
    expect(page.status).toBe(200);
    const script = /<script[^>]*\bsrc="([^"]+)"/.exec(await page.text())?.[1] ?? '';
    expect(script).toMatch(/^\/console\/assets\/.+\.js$/);
    expect((await fetch(`http://127.0.0.1:${adminPort}${script}`)).status).toBe(200);
    const listed = new Set<number>();
    for (let next: string | undefined = `${again}/v1/pets?limit=100`; next; ) {
      const res: Response = await fetch(next, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      for (const pet of (await res.json()) as { id: number }[]) listed.add(pet.id);
      const link: string | undefined = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
      next = link && new URL(link, again).toString();
    }
    expect(acknowledged.filter((id) => !listed.has(id))).toEqual([]);
    await podman('stop', second);
  });

  it('takes a SQLite file from a service that ran outside it, as docs/upgrading.md says: one file made with VACUUM INTO, owned by 1000:1000; not owned, the start says so in one line', async () => {
    // The service outside a container, on a file of its own: a key and three pets, then stopped.
    const outside = tempDatabase();
    const { key } = await createKey(serverDist, { DATABASE_URL: outside }, '--plan', 'pro');
    const server = await startProcess({ DATABASE_URL: outside, NODE_ENV: 'production' });
    const ids: number[] = [];
    for (const name of ['Moved 1', 'Moved 2', 'Moved 3']) {
      const res = await petsCall(server.url, key, {
        method: 'POST',
        body: JSON.stringify({ name, categoryId: 1 }),
      });
      expect(res.status).toBe(201);
      ids.push(((await res.json()) as { id: number }).id);
    }
    expect(await server.stop()).toBe(0);
    // One consistent file (the -wal folded in), in the folder the container mounts.
    const folder = mkdtempSync(join(tmpdir(), 'animal-store-moving-'));
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(outside, { readonly: true });
    db.exec(`VACUUM INTO '${join(folder, 'animal-store.db')}'`);
    db.close();
    const mount = ['-v', `${folder}:/var/lib/animal-store`, '--read-only'];
    // Not yet the image user's: the start refuses, one line naming DATABASE_URL.
    const refused = named('moving-refused');
    await podman(
      'run',
      '--name',
      refused,
      '-e',
      'NODE_ENV=production',
      '-e',
      'PORT=0',
      ...mount,
      image,
    ).catch(() => {});
    expect(await podman('inspect', refused, '--format', '{{.State.ExitCode}}')).toMatch(/^[1-9]/);
    // `podman logs` writes what the container wrote to stderr on its own stderr.
    const { stdout, stderr } = await run('podman', ['logs', refused], { env: podmanEnv() });
    expect(`${stdout}${stderr}`.trim().split('\n')).toEqual([expect.stringMatching(/DATABASE_URL/)]);
    // Owned by 1000:1000, as the docs say: the pets and the key are there, and it writes.
    execFileSync('chown', ['-R', '1000:1000', folder]);
    const moved = named('moving');
    const url = await runImage(moved, { NODE_ENV: 'production' }, ...mount);
    const listed = (await (await petsCall(url, key)).json()) as { id: number; name: string }[];
    expect(listed.map((p) => p.id)).toEqual(ids);
    const more = await petsCall(url, key, {
      method: 'POST',
      body: JSON.stringify({ name: 'Moved 4', categoryId: 1 }),
    });
    expect(more.status).toBe(201);
    await podman('stop', moved);
    rmSync(folder, { recursive: true, force: true });
  });

  it('two containers on the host’s PostgreSQL and Redis, through the environment: one key’s limit shared exactly', async () => {
    const store = await freshStore('postgres+redis');
    const env = { ...store, NODE_ENV: 'production' } as Record<string, string>;
    const [one, two] = [named('pg-1'), named('pg-2')];
    const urls = [await runImage(one, env), await runImage(two, env)];
    const key = await keyInside(one, '--plan', 'enterprise', '--per-minute', '9', '--per-day', '100');
    expect(await obedientlyAdmitted(urls, key, 40)).toBe(9);
    const logs = await podman('logs', one);
    expect(logs).toContain(`"backend":"postgres+redis"`);
  });
});

/**
 * The image of an earlier release, built from its commit (the releases table's row) as its Containerfile
 * says, once per machine: kept under a tag naming the commit, so that later runs find it.
 */
async function earlierImage(version: EarlierVersion): Promise<string> {
  const commit = releaseCommit(version);
  const tag = `localhost/animal-store:${version}-${commit.slice(0, 12)}`;
  if (
    await podman('image', 'exists', tag).then(
      () => true,
      () => false,
    )
  )
    return tag;
  const tree = mkdtempSync(join(tmpdir(), `animal-store-${version}-`));
  try {
    execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C "${tree}"`], { cwd: repo });
    const ca = process.env.NODE_EXTRA_CA_CERTS;
    const caArgs = ca
      ? ['-v', `${ca}:/tmp/extra-ca.pem:ro`, '--build-arg', 'NODE_EXTRA_CA_CERTS=/tmp/extra-ca.pem']
      : [];
    await podman('build', '--pull=never', '--format', 'docker', ...caArgs, '-t', tag, tree);
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
  return tag;
}

describe.runIf(available)('a rolling upgrade of containers (docs/upgrading.md)', () => {
  // The newest release's image (the one deployments run now; the releases table's last row): the older
  // ones' paths are rolled as processes (own-engines/upgrade-from-every-release.test.ts).
  const latest = earlierReleases.at(-1) as EarlierVersion;
  it(`from ${latest}’s image, built from its commit, to this one and back, one container at a time on the host’s PostgreSQL and Redis, under load: nothing lost, no request failed, the limit exact`, {
    timeout: 600_000,
  }, async () => {
    const previous = await earlierImage(latest);
    const store = await freshStore('postgres+redis');
    const env = { ...store, NODE_ENV: 'production', ...noBans } as Record<string, string>;
    let started = 0;
    let newest = '';
    const start = async (release: string, imageName: string): Promise<Instance> => {
      const name = named(`roll-${started++}`);
      newest = name;
      const url = await runImageOf(imageName, name, env);
      return {
        release,
        url,
        stop: async () => {
          await podman('stop', '--time', '15', name);
          return Number(await podman('inspect', name, '--format', '{{.State.ExitCode}}'));
        },
      };
    };
    const serving = [await start(latest, previous), await start(latest, previous)];
    // Keys as the release's operator made them: its keys command inside its container.
    const keyOf = async (perMinute: number, perDay: number) => {
      const made = await podman(
        'exec',
        newest,
        'animal-store-keys',
        'create',
        '--json',
        ...enterprise(perMinute, perDay),
      );
      return /"key"\s*:\s*"(as_[^"]+)"/.exec(made)?.[1] as string;
    };
    const writerKey = await keyOf(1_000_000, 10_000_000);
    const limitedKey = await keyOf(perDay, perDay);
    const { resets } = await rehearse(
      { serving, store, writerKey, limitedKey },
      () => roll(serving, () => start('current', image), 2),
      () => roll(serving, () => start(latest, previous), 2),
    );
    expect(resets).toEqual([]);
    await Promise.all(serving.map((instance) => instance.stop()));
  });
});

// compose.yaml as docs/compose.md has an operator run it, with Debian's podman-compose: the image built above,
// and stand-ins for the official PostgreSQL, Redis and nginx images (test-support's containers.ts), each run
// a project of its own in a folder holding the files compose.yaml reads and the env file the docs say how
// to make.
const podmanCompose = toolFor('the compose deployment', 'podman-compose');
const projects: { down(): Promise<void> }[] = [];
afterAll(async () => {
  for (const project of projects) await project.down();
});

/** A project of compose.yaml (and `more` files on top), up and ready behind its proxy. */
async function composeUp(name: string, more: string[] = []) {
  await standInServiceImages();
  const project = `animal-store-test-${process.pid}-${name}`;
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-compose-'));
  const files = ['compose.yaml', ...more];
  for (const file of [...files, ...readdirSync(`${repo}deploy/compose`).map((f) => `deploy/compose/${f}`)]) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(`${repo}${file}`, join(dir, file));
  }
  const password = randomBytes(24).toString('hex');
  const adminToken = randomBytes(24).toString('hex');
  writeFileSync(
    join(dir, 'compose.env'),
    `POSTGRES_PASSWORD=${password}\nPGPASSWORD=${password}\nADMIN_TOKENS=${adminToken}\n`,
  );
  const [port, adminPort] = [await freePort(), await freePort()];
  const env = {
    ...podmanEnv(),
    ANIMAL_STORE_IMAGE: image,
    PUBLISH_PORT: String(port),
    ADMIN_PUBLISH_PORT: String(adminPort),
  };
  const compose = async (...args: string[]) =>
    (
      await run(podmanCompose as string, ['-p', project, ...files.flatMap((f) => ['-f', f]), ...args], {
        cwd: dir,
        env,
        maxBuffer: 64 * 1024 * 1024,
      })
    ).stdout;
  const handle = {
    url: `http://127.0.0.1:${port}`,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    adminToken,
    password,
    compose,
    /** The container of `service`, as podman-compose 1.0.3 names it. */
    container: (service: string) => `${project}_${service}_1`,
    /**
     * A key made by the keys command inside a service, as docs/compose.md shows it; tried again while the
     * instance still starts (it starts again until PostgreSQL answers).
     */
    async keyInService(...args: string[]): Promise<string> {
      for (let tries = 0; ; tries++) {
        const made = await compose('exec', 'instance-a', 'animal-store-keys', 'create', '--json', ...args);
        // Its JSON, among the lines podman-compose and the command's log add.
        const key = /"key"\s*:\s*"(as_[^"]+)"/.exec(made)?.[1];
        if (key) return key;
        if (tries === 30) throw new Error(`no key made:\n${made}`);
        await new Promise((r) => setTimeout(r, 1_000));
      }
    },
    /**
     * A key of no practical limit, once both instances have answered it ten times in a row: their pools'
     * first connections to the PostgreSQL container (password logins) can miss the 3 s connect deadline on
     * a loaded machine, and a 503 then is the service working, not what a test here measures.
     */
    async warmKey(): Promise<string> {
      const key = await handle.keyInService(...enterprise(1_000_000, 10_000_000));
      for (let inRow = 0, tries = 0; inRow < 10; tries++) {
        if (tries === 200) throw new Error('never answered ten times in a row');
        inRow = (await petsCall(handle.url, key)).status === 200 ? inRow + 1 : 0;
      }
      return key;
    },
    /**
     * Runs `steps`; a failure carries the services' logs but the 2xx lines of the proxy and the instances (the
     * last 6,000 characters), its own message last, where a report cut from the top still shows it.
     */
    async shown(steps: () => Promise<void>) {
      try {
        await steps();
      } catch (error) {
        const logs = (await compose('logs').catch((e: Error) => e.message))
          .split('\n')
          .filter((line) => !/" 2\d\d \d+ "|"statusCode":2\d\d\}/.test(line))
          .join('\n');
        throw new Error(
          `--- podman-compose logs, the 2xx lines left out:\n${logs.slice(-6_000)}\n--- ${(error as Error).message}`,
        );
      }
    },
    /** What the project left behind: containers, volumes, networks (by the project's label). */
    leftBehind: () =>
      Promise.all(
        [
          ['ps', '-a'],
          ['volume', 'ls'],
          ['network', 'ls'],
        ].map((command) =>
          podman(...command, '--filter', `label=io.podman.compose.project=${project}`, '--format', '{{.ID}}'),
        ),
      ),
    /** podman-compose 1.0.3's `down` leaves the project's network: removed as docs/compose.md says. */
    async down() {
      await compose('down', '-v').catch(() => {});
      await podman('network', 'rm', '--force', `${project}_default`).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
  projects.push(handle);
  await handle.shown(async () => {
    await compose('up', '-d');
    const deadline = Date.now() + 120_000;
    while (
      !(await fetch(`${handle.url}/readyz`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (Date.now() > deadline) throw new Error('never ready');
      await new Promise((r) => setTimeout(r, 500));
    }
  });
  return handle;
}

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

describe.runIf(available && podmanCompose)('compose.yaml', () => {
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
      await new Promise((r) => setTimeout(r, 1_000));
      await compose('stop', 'instance-b');
      await new Promise((r) => setTimeout(r, 2_000));
      let before = await served();
      await compose('start', 'instance-b');
      for (let tries = 0; (await served()) - before < 2; tries++) {
        if (tries === 60) throw new Error('instance-b never served again through the proxy');
        await new Promise((r) => setTimeout(r, 500));
      }
      timed = true;
      before = await served();
      const sent = answers.length;
      for (const deadline = Date.now() + 90_000; answers.length - sent < 40; ) {
        if (Date.now() > deadline) {
          throw new Error(
            `40 creates after instance-b came back took over 90 s: ${answers.length - sent} answered`,
          );
        }
        await new Promise((r) => setTimeout(r, 50));
      }
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
        const asked = Date.now();
        let okAt = asked;
        while ((await primary()) === from) {
          if (Date.now() > asked + 60_000) {
            const log = await podman('logs', '--tail', '40', deployment.container('sentinel-1')).catch(
              String,
            );
            throw new Error(
              `no failover; SENTINEL FAILOVER answered: ${answers.join(' | ')}\n--- ${await sentinel('replicas', 'animal-store')}\n--- sentinel-1:\n${log}`,
            );
          }
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
          await new Promise((r) => setTimeout(r, 500));
        }
        const movedMs = Date.now() - okAt; // from the failover the Sentinel took to the new primary named
        for (let i = 0; i < 40; i++) {
          const logs = await compose('logs', 'instance-a', 'instance-b');
          if ((logs.match(/Redis reachable again/g)?.length ?? 0) >= reachable) break;
          await new Promise((r) => setTimeout(r, 500));
        }
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
