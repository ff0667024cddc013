// The container image (Containerfile at the root), as the container project's set-up built it unchanged
// (support/image-setup.ts), run with podman as an operator runs it (docs/container.md): its labels, SBOM and
// health check; on SQLite with a volume and a read-only root, stopped by `podman stop` with nothing lost,
// its data kept across a new container (which serves the console on its admin listener); a SQLite file
// moved into it; two containers on the host's PostgreSQL and Redis through the environment, sharing one
// key's limit exactly.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createKey, freePort, podman, podmanEnv } from '@animal-store/test-support';
import { describe, expect, it, vi } from 'vitest';
import { freshStore, processesStoppedAfterEach, serverDist, tempDatabase } from '../support/harness.js';
import {
  checkout,
  containerNames,
  image,
  imageBuiltBeforeAll,
  keyInside,
  obedientlyAdmitted,
  petsCall,
  repo,
  runImage,
} from '../support/image.js';

imageBuiltBeforeAll();

const { version, revision } = await checkout();
const run = promisify(execFile);
const startProcess = processesStoppedAfterEach();
const named = containerNames();

describe.runIf(image)('the container image', () => {
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
    await vi.waitUntil(() => acknowledged.length > 0, { timeout: 10_000 }); // the writers are writing
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
