// The container image (Containerfile at the root), built unchanged and run with podman as an operator
// runs it (docs/container.md): on SQLite with a volume and a read-only root, stopped by `podman stop` with
// nothing lost, its data kept across a new container (which serves the console on its admin listener); and two containers on the host's PostgreSQL and
// Redis through the environment, sharing one key's limit exactly. The official base image is stood in for
// locally under its own name (no registry is reachable here: test-support's containers.ts).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort, podman, standInNodeImage, toolFor } from '@animal-store/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStore } from '../support/harness.js';

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

/** Runs the image detached on the host's network with `env`; its port and name. */
async function runImage(name: string, env: Record<string, string>, ...options: string[]) {
  const port = await freePort();
  const vars = Object.entries({ PORT: String(port), ...env }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  await podman('run', '--detach', '--name', name, ...vars, ...options, image);
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

const petsCall = (url: string, key: string, init: RequestInit = {}) =>
  fetch(`${url}/v1/pets${init.method === 'POST' ? '' : '?limit=100'}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  });

describe.runIf(available)('the container image', () => {
  it('is labelled with the version of the commit it was built from, says it on --version, runs as the node user by number (runAsNonRoot can verify it), and checks its health without curl', async () => {
    const [inspected] = JSON.parse(await podman('image', 'inspect', image)) as {
      Labels: Record<string, string>;
      Size: number;
      Config: { User: string; Volumes?: Record<string, unknown> | null; Env: string[] };
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
    expect(inspected?.Healthcheck?.Test.join(' ')).toContain('animal-store-server --healthcheck');
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

  it('with HOST=::1 its health check still finds it, and SIGUSR1 opens no inspector', async () => {
    const name = named('ipv6');
    await runImage(name, { HOST: '::1', DATABASE_URL: ':memory:' });
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

  it('two containers on the host’s PostgreSQL and Redis, through the environment: one key’s limit shared exactly', async () => {
    const store = await freshStore('postgres+redis');
    const env = { ...store, NODE_ENV: 'production' } as Record<string, string>;
    const [one, two] = [named('pg-1'), named('pg-2')];
    const urls = [await runImage(one, env), await runImage(two, env)];
    const key = await keyInside(one, '--plan', 'enterprise', '--per-minute', '9', '--per-day', '100');
    // An obedient client, round-robin: a 429 that asks ≤ 1 s (points held by the other container) is waited
    // out; one that asks more means the minute is used.
    let admitted = 0;
    for (let i = 0; i < 40; i++) {
      const res = await petsCall(urls[i % 2] as string, key);
      if (res.status === 200) admitted++;
      else if (res.status !== 429) expect(res.status).toBe(200);
      else if (Number(res.headers.get('retry-after')) > 1) break;
      else await new Promise((r) => setTimeout(r, 1_000));
    }
    expect(admitted).toBe(9);
    const logs = await podman('logs', one);
    expect(logs).toContain(`"backend":"postgres+redis"`);
  });
});
