// The runtime: the service started by its bin on the Node.js running these tests (.ci/run runs this suite on
// Node 22, 24 and 26), better-sqlite3's garbage-collected statements (12.x aborted Node ≥ 24.19 there), a
// Node.js outside the supported range, and a driver binary that cannot load: one line each, never a crash.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listeningUrl, onPath, spawnUntilReady, tempDatabase } from '@animal-store/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { call } from '../support/harness.js';

const serverPackage = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(serverPackage, 'bin/animal-store-server.js');
const major = process.versions.node.split('.')[0];

/** PATH with `node` resolving to the given binary's folder first, as `#!/usr/bin/env node` will see it. */
const pathWith = (node: string) => `${dirname(node)}:${process.env.PATH ?? ''}`;

const stoppers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const stop of stoppers.splice(0)) await stop();
});

/** Runs `command` to its exit within 20 s: status and everything it printed. */
async function runToExit(command: string, args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  stoppers.push(async () => child.exitCode === null && child.kill('SIGKILL'));
  let output = '';
  child.stdout.on('data', (d) => {
    output += d;
  });
  child.stderr.on('data', (d) => {
    output += d;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const [code, signal] = (await once(child, 'exit')) as [number | null, string | null];
  clearTimeout(timer);
  return { code, signal, output };
}

describe(`Node.js ${process.version}`, () => {
  it(`the server started by its bin answers, and exits 0 on SIGTERM (Node ${major})`, async () => {
    const server = await spawnUntilReady(bin, [], {
      env: {
        PATH: pathWith(process.execPath),
        PORT: '0',
        HOST: '127.0.0.1',
        NODE_ENV: 'development',
        DATABASE_URL: tempDatabase(),
      },
      ready: (output) => listeningUrl(output) !== undefined,
    });
    stoppers.push(server.stop);
    const url = listeningUrl(server.output()) as string;
    const key = /\n {2}(as_[0-9a-f]{12}_[A-Za-z0-9_-]{43})\n/.exec(server.output())?.[1];
    expect(key, 'the development key banner').toBeDefined();
    for (let i = 0; i < 50; i++) {
      const created = await call(`${url}/v1/pets`, key, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: `Rex ${i}`, categoryId: 1 }),
      });
      expect(created.status).toBe(201);
    }
    expect((await call(`${url}/v1/pets?limit=20`, key)).status).toBe(200);
    expect(await server.stop()).toBe(0);
    expect(server.output()).not.toMatch(/Assertion failed|Segmentation fault|SIGABRT/);
  });

  it('better-sqlite3 survives the garbage collection of 20,000 statements and a clean exit', async () => {
    const script = `
      const Database = require('better-sqlite3');
      const db = new Database(':memory:');
      for (let i = 0; i < 20000; i++) db.prepare('SELECT ' + i);
      globalThis.gc();
      db.close();
      process.stdout.write('collected');`;
    const { code, signal, output } = await runToExit(process.execPath, ['--expose-gc', '-e', script], {
      PATH: process.env.PATH,
      NODE_PATH: join(serverPackage, 'node_modules'),
    });
    expect({ code, signal, output }).toEqual({ code: 0, signal: null, output: 'collected' });
  });
});

describe('a Node.js the service does not support', () => {
  // This project's machines carry an end-of-life Node.js 20 as their own; elsewhere there may be none.
  const older = [onPath('node'), '/usr/bin/node', '/usr/local/bin/node'].find((node) => {
    if (!node || node === process.execPath) return false;
    try {
      const version = execFileSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' });
      return Number(version.split('.')[0]) < 22;
    } catch {
      return false;
    }
  });
  if (!older) process.stderr.write('skipping the older-Node.js start-up test: no Node.js below 22 here\n');

  it.skipIf(!older)(
    'the server and the keys command stop with one line naming both versions and the command that runs them',
    async () => {
      const env = { PATH: pathWith(older as string), DATABASE_URL: tempDatabase(), PORT: '0' };
      const keys = join(serverPackage, 'bin/animal-store-keys.js');
      for (const [entry, args, again] of [
        [bin, [], "npx -y -p node@24 -p pnpm@10 -c 'pnpm start'"],
        [
          keys,
          ['create', '--label', 'team A'],
          `npx -y -p node@24 -p pnpm@10 -c 'pnpm keys create --label "team A"'`,
        ],
      ] as const) {
        const { code, output } = await runToExit(entry, [...args], env);
        expect(code).toBe(1);
        const lines = output.trim().split('\n');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(/^Animal Store needs Node\.js >=22\.12\.0; this is Node\.js v(1\d|2[01])\./);
        expect(lines[0]).toContain(`e.g. ${again} `); // what was run, in the form that runs it
      }
    },
  );
});

describe('a SQLite driver that cannot load', () => {
  /**
   * The built server in a folder of its own whose better-sqlite3 is a copy with its prebuilt binary
   * `broken` (garbage bytes, or removed); every other dependency is the real one, linked.
   */
  function serverWithDriver(broken: 'garbage' | 'missing'): string {
    const root = join(dirname(tempDatabase()), 'server');
    cpSync(join(serverPackage, 'dist'), join(root, 'dist'), { recursive: true });
    cpSync(join(serverPackage, 'package.json'), join(root, 'package.json'));
    const modules = join(serverPackage, 'node_modules');
    const linked = join(root, 'node_modules');
    for (const name of readdirSync(modules)) {
      if (name.startsWith('.')) continue;
      const scoped = name.startsWith('@')
        ? readdirSync(join(modules, name)).map((n) => `${name}/${n}`)
        : [name];
      for (const entry of scoped) {
        mkdirSync(dirname(join(linked, entry)), { recursive: true });
        if (entry === 'better-sqlite3') {
          cpSync(join(modules, entry), join(linked, entry), { recursive: true, dereference: true });
        } else {
          symlinkSync(join(modules, entry), join(linked, entry));
        }
      }
    }
    const prebuilds = join(linked, 'better-sqlite3/prebuilds');
    for (const file of readdirSync(prebuilds)) {
      if (broken === 'missing') rmSync(join(prebuilds, file));
      else writeFileSync(join(prebuilds, file), 'not a shared object\n'.repeat(256));
    }
    return root;
  }

  it.each([
    ['garbage', 'invalid ELF header'],
    ['missing', 'Cannot find module'],
  ] as const)(
    'a %s binary is reported as the driver, in one line naming it and this Node.js',
    async (broken, cause) => {
      const root = serverWithDriver(broken);
      const { code, output } = await runToExit(process.execPath, [join(root, 'dist/main.js')], {
        PATH: process.env.PATH,
        DATABASE_URL: join(root, 'store.db'),
        PORT: '0',
        NODE_ENV: 'production',
      });
      expect(code).toBe(1);
      const lines = output.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('The SQLite driver better-sqlite3 13.');
      expect(lines[0]).toContain(`cannot be loaded on Node.js ${process.version}`);
      expect(lines[0]).toContain(cause);
      expect(output).not.toContain('check that its folder exists');
      expect(output).not.toMatch(/\n\s+at /);
    },
  );
});
