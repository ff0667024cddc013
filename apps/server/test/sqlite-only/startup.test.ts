// Start-up of the built server on stores it must refuse, liveness and readiness, and durability under
// kill -9: every failure is one line that names the variable and the place and says what to do.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createKey, enterprise, keysCommand, tempDatabase } from '@animal-store/test-support';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { call, type ServerProcess, serverDist, startProcess } from '../support/harness.js';

const running: (ServerProcess | ChildProcess)[] = [];
afterEach(async () => {
  for (const p of running.splice(0)) {
    if ('stop' in p) await p.stop();
    else p.kill('SIGKILL');
  }
});

/**
 * The Node.js running these tests, where another user can run it: `npx -p node@24` keeps it under /root,
 * which the user nobody cannot enter. Copied once into a folder anyone may read.
 */
let sharedNode: string | undefined;
function nodeAnyoneCanRun(): string {
  if (!sharedNode) {
    const folder = mkdtempSync(join(tmpdir(), 'animal-store-node-'));
    chmodSync(folder, 0o755);
    sharedNode = join(folder, 'node');
    copyFileSync(process.execPath, sharedNode);
    chmodSync(sharedNode, 0o755);
  }
  return sharedNode;
}

/** Runs the built server to its exit (as another user with `as`): status and everything it printed. */
async function runToExit(env: Record<string, string>, as: { uid?: number; gid?: number } = {}) {
  const node = as.uid === undefined ? process.execPath : nodeAnyoneCanRun();
  const child = spawn(node, [join(serverDist, 'main.js')], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'production', ...env },
    ...as,
  });
  running.push(child);
  let output = '';
  child.stdout.on('data', (d) => {
    output += d;
  });
  child.stderr.on('data', (d) => {
    output += d;
  });
  const [code] = (await Promise.race([
    once(child, 'exit'),
    new Promise((_, reject) => setTimeout(() => reject(new Error(`still running:\n${output}`)), 15_000)),
  ])) as [number];
  return { code, output };
}

/** A database file with `n` pets, closed. */
function databaseWithPets(n: number): string {
  const path = tempDatabase();
  const db = new Database(path);
  db.exec(
    "CREATE TABLE pets (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, category_id INTEGER NOT NULL, status TEXT NOT NULL CHECK (status IN ('available', 'pending', 'sold')))",
  );
  const insert = db.prepare("INSERT INTO pets (name, category_id, status) VALUES (?, 1, 'available')");
  db.transaction(() => {
    for (let i = 0; i < n; i++) insert.run(`Pet number ${i} ${'x'.repeat(60)}`);
  })();
  db.pragma('journal_mode = DELETE');
  db.close();
  return path;
}

const expectOneClearLine = (output: string, ...mentions: string[]) => {
  const lines = output.trim().split('\n');
  expect(lines).toHaveLength(1);
  for (const text of mentions) expect(lines[0]).toContain(text);
  expect(output).not.toMatch(/\n\s+at /); // no stack trace
};

describe('start-up on a store it cannot use', () => {
  it.each([
    [
      'a file of random bytes',
      () => {
        const path = tempDatabase();
        writeFileSync(path, randomBytes(8192));
        return path;
      },
      'is not an SQLite database',
    ],
    [
      'a directory',
      () => {
        const path = tempDatabase();
        mkdirSync(path);
        return path;
      },
      'is a directory',
    ],
    ['a place that cannot be written', () => '/sys/animal-store.db', 'cannot be'],
    [
      'a path whose parent is a file',
      () => {
        const path = tempDatabase();
        writeFileSync(path, '');
        return join(path, 'store.db');
      },
      'is a file',
    ],
  ])('when DATABASE_URL is %s, then it exits non-zero with one line naming it', async (_, make, reason) => {
    const path = make();
    const { code, output } = await runToExit({ DATABASE_URL: path });
    expect(code).not.toBe(0);
    expectOneClearLine(output, 'DATABASE_URL', path, reason);
  });

  it('when DATABASE_URL is a path under /proc, then it exits at once with one line (no endless mkdir)', async () => {
    const { code, output } = await runToExit({ DATABASE_URL: '/proc/animal-store/x/store.db' });
    expect(code).toBe(1);
    expectOneClearLine(output, 'DATABASE_URL', '/proc/animal-store/x/store.db', 'cannot be opened');
  });

  it('when the file is damaged in its middle pages, then it refuses to serve it', async () => {
    const path = databaseWithPets(3_000);
    const size = statSync(path).size;
    const fd = openSync(path, 'r+');
    const pageSize = 4096;
    for (let page = Math.floor(size / pageSize / 3); page < Math.floor(size / pageSize / 3) + 5; page++) {
      writeSync(fd, randomBytes(pageSize), 0, pageSize, page * pageSize);
    }
    const header = Buffer.alloc(16);
    readSync(fd, header, 0, 16, 0);
    closeSync(fd);
    expect(header.toString('latin1')).toBe('SQLite format 3\0'); // still looks like SQLite from outside
    const { code, output } = await runToExit({ DATABASE_URL: path });
    expect(code).not.toBe(0);
    expectOneClearLine(output, 'DATABASE_URL', path, 'is damaged', 'backup');
  });

  it('when another process holds the file locked, then it exits with one line saying so', async () => {
    const path = tempDatabase();
    await createKey(serverDist, { DATABASE_URL: path }, '--plan', 'free'); // a real store
    const locker = spawn(
      process.execPath,
      [
        '-e',
        `const db = new (require('better-sqlite3'))(${JSON.stringify(path)}); db.pragma('locking_mode = EXCLUSIVE'); db.exec('BEGIN EXCLUSIVE'); console.log('locked'); setInterval(() => {}, 1000);`,
      ],
      { cwd: dirname(serverDist) },
    );
    running.push(locker);
    await once(locker.stdout, 'data');
    const { code, output } = await runToExit({ DATABASE_URL: path });
    expect(code).not.toBe(0);
    expectOneClearLine(output, 'DATABASE_URL', path, 'locked by another process');
  }, 20_000);

  // Permissions bind only a process that is not root: these run the server as the user nobody.
  const nobody = { uid: 65534, gid: 65534 };
  const asNobody = () => {
    if (process.getuid?.() === 0) return true;
    const line = 'the unwritable-files cases need root (they run the server as nobody)';
    if (process.env.CI) throw new Error(`CI needs every case; ${line}`);
    process.stderr.write(`skipping ${line}\n`);
    return false;
  };

  it.runIf(asNobody())(
    'when the -shm file cannot be written, then it exits with one line naming it (not SIGBUS later)',
    async () => {
      const path = tempDatabase();
      const holder = new Database(path); // keeps -wal and -shm in place while the server starts
      holder.pragma('journal_mode = WAL');
      holder.exec('CREATE TABLE t (x)');
      try {
        chmodSync(dirname(path), 0o777);
        for (const file of [path, `${path}-wal`]) chmodSync(file, 0o666);
        chmodSync(`${path}-shm`, 0o444);
        const { code, output } = await runToExit({ DATABASE_URL: path }, nobody);
        expect(code).toBe(1);
        expectOneClearLine(output, 'DATABASE_URL', `${path}-shm is not writable`);
      } finally {
        holder.close();
      }
    },
  );

  it.runIf(asNobody())(
    'when its folder cannot be written, then it exits with one line naming the folder',
    async () => {
      const path = tempDatabase();
      new Database(path).close();
      chmodSync(dirname(path), 0o755); // nobody may enter, but not create the -wal file
      chmodSync(path, 0o666);
      const { code, output } = await runToExit({ DATABASE_URL: path }, nobody);
      expect(code).toBe(1);
      expectOneClearLine(output, 'DATABASE_URL', `its folder ${dirname(path)} is not writable`);
    },
  );

  it('when the port is in use, then it exits with one line, before making a development key', async () => {
    const holder = createServer().listen(0, '127.0.0.1');
    await once(holder, 'listening');
    const port = String((holder.address() as { port: number }).port);
    const path = tempDatabase();
    try {
      const { code, output } = await runToExit({ DATABASE_URL: path, PORT: port, NODE_ENV: 'development' });
      expect(code).not.toBe(0);
      expectOneClearLine(output, 'PORT', port, 'already in use');
      expect(output).not.toContain('as_');
      expect(
        JSON.parse((await keysCommand(serverDist, { DATABASE_URL: path }, 'list', '--json')).stdout),
      ).toEqual([]);
    } finally {
      holder.close();
    }
  });

  it('when the admin port is in use, then it exits with one line naming ADMIN_PORT', async () => {
    const holder = createServer().listen(0, '127.0.0.1');
    await once(holder, 'listening');
    const port = String((holder.address() as { port: number }).port);
    try {
      const { code, output } = await runToExit({
        DATABASE_URL: tempDatabase(),
        NODE_ENV: 'production',
        ADMIN_PORT: port,
        ADMIN_TOKENS: 'x'.repeat(32),
      });
      expect(code).toBe(1);
      expectOneClearLine(output, 'ADMIN_PORT', port, 'already in use');
    } finally {
      holder.close();
    }
  });

  it('when ADMIN_PORT is set without ADMIN_TOKENS, then the configuration is refused in one line', async () => {
    const { code, output } = await runToExit({ DATABASE_URL: tempDatabase(), ADMIN_PORT: '0' });
    expect(code).toBe(2);
    expect(output).toContain('ADMIN_TOKENS: required when ADMIN_PORT is set');
    expect(output).not.toMatch(/\n\s+at /);
  });

  it.each([
    ['mysql://db.example/animals', 'unsupported scheme "mysql:"'],
    ['NODE_ENV=prod', 'NODE_ENV'],
  ])('when %s, then the configuration is refused', async (value, message) => {
    const env: Record<string, string> = value.startsWith('NODE_ENV=')
      ? { DATABASE_URL: tempDatabase(), NODE_ENV: value.slice(9) }
      : { DATABASE_URL: value };
    const { code, output } = await runToExit(env);
    expect(code).toBe(2);
    expect(output).toContain(message);
  });

  it('when PostgreSQL cannot be reached at start, then it exits with one line naming DATABASE_URL', async () => {
    const { code, output } = await runToExit({
      DATABASE_URL: 'postgres://postgres:secret@127.0.0.1:1/animals',
    });
    expect(code).toBe(1);
    expectOneClearLine(output, 'DATABASE_URL', '127.0.0.1:1/animals', 'cannot be used');
    expect(output).not.toContain('secret');
  });

  it('when Redis cannot be reached at start, then it exits with one line naming REDIS_URL', async () => {
    const { code, output } = await runToExit({
      DATABASE_URL: tempDatabase(),
      REDIS_URL: 'redis://:secret@127.0.0.1:1',
    });
    expect(code).toBe(1);
    expectOneClearLine(output, 'REDIS_URL', '127.0.0.1:1', 'cannot be reached');
    expect(output).not.toContain('secret');
  });

  it('when the Sentinels are absent or silent at start, then it exits within the 5 s deadline with one line naming REDIS_URL', async () => {
    // A Sentinel that takes the connection and never answers, beside one that refuses it.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    try {
      const started = performance.now();
      const { code, output } = await runToExit({
        DATABASE_URL: tempDatabase(),
        REDIS_URL: `redis+sentinel://127.0.0.1:1,127.0.0.1:${port}/animals`,
      });
      expect(code).toBe(1);
      expect(performance.now() - started).toBeLessThan(15_000); // 5 s, and a loaded machine's start
      expectOneClearLine(output, 'REDIS_URL', '127.0.0.1:1', 'cannot be reached');
    } finally {
      silent.close();
    }
  });
});

describe('start-up beside another process', () => {
  it('when several processes open one new file at once, every one of them opens it (WAL set despite SQLITE_BUSY)', async () => {
    // Setting WAL on a new file answers SQLITE_BUSY at once while another process opens it: workers and
    // instances starting together used to fail "locked by another process" about one time in five.
    const opener = `import { openDatabase } from ${JSON.stringify(join(serverDist, 'store/sqlite/database.js'))};
      openDatabase(process.argv[1]).close();`;
    for (let round = 0; round < 8; round++) {
      const path = tempDatabase();
      const runs = Array.from({ length: 3 }, () => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', opener, path], { stdio: 'pipe' });
        let output = '';
        child.stderr.on('data', (d) => {
          output += d;
        });
        return once(child, 'exit').then(([code]) => ({ code, output }));
      });
      expect(await Promise.all(runs)).toEqual(Array(3).fill({ code: 0, output: '' }));
    }
  });
});

describe('liveness and readiness', () => {
  it('/healthz and /readyz answer on a healthy store; the readiness line carries the url and version', async () => {
    const server = await startProcess({ DATABASE_URL: tempDatabase(), NODE_ENV: 'production' });
    running.push(server);
    expect(await (await fetch(`${server.url}/healthz`)).json()).toMatchObject({
      status: 'ok',
      version: expect.any(String),
    });
    expect(await (await fetch(`${server.url}/readyz`)).json()).toEqual({ status: 'ready' });
    expect(server.output()).toMatch(/"msg":"listening"/);
  });
});

describe('durability', () => {
  it('after kill -9 under concurrent writes, every acknowledged pet is there, unchanged', async () => {
    const path = tempDatabase();
    const { key } = await createKey(serverDist, { DATABASE_URL: path }, ...enterprise(100_000, 1_000_000));
    const first = await startProcess({ DATABASE_URL: path, NODE_ENV: 'production', LOG_LEVEL: 'warn' });
    running.push(first);
    const acknowledged: { id: number; name: string; categoryId: number; status: string }[] = [];
    let stop = false;
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const res = await call(`${first.url}/v1/pets`, key, {
            method: 'POST',
            body: JSON.stringify({ name: `w${w} #${i}`, categoryId: w + 1 }),
          });
          if (res.status === 201) acknowledged.push(await res.json());
        } catch {
          return; // the process is gone
        }
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    // Killed mid-stream, once more than 20 writes were acknowledged (1.5 s on an idle machine).
    await expect.poll(() => acknowledged.length, { timeout: 30_000, interval: 20 }).toBeGreaterThan(20);
    first.child.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    expect(acknowledged.length).toBeGreaterThan(20);

    const second = await startProcess({ DATABASE_URL: path, NODE_ENV: 'production', LOG_LEVEL: 'warn' });
    running.push(second);
    const stored = new Map<number, unknown>();
    let next: string | undefined = `${second.url}/v1/pets?limit=100`;
    while (next) {
      const res = await call(next, key);
      for (const pet of (await res.json()) as { id: number }[]) stored.set(pet.id, pet);
      const link = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
      next = link ? `${second.url}${link}` : undefined;
    }
    for (const pet of acknowledged) expect(stored.get(pet.id)).toEqual(pet);
  }, 30_000);
});
