// Silent network cuts between a server instance and its stores, as a real partition makes them: packets
// dropped, no RST, no ICMP, both ends left waiting. A PostgreSQL cluster and a Redis server of the test's
// own run inside a network namespace of its own; each instance (in the root namespace, where the tests and
// the servers run as usual) reaches each store over a veth link of its own, with fixed neighbour entries
// (no ARP, so nothing ever reports a failure). A cut takes the link down on the stores' side: the
// instance's side keeps its address, its route and its carrier-less link, and what it sends is dropped;
// what the stores send back has no route. A heal brings the link up again: TCP carries on where it was.
// The test's own connections use the stores' unix sockets, which no cut touches.
//
// Needs root (ip netns), iproute2, Debian's PostgreSQL programs (initdb, pg_ctl) with a postgres user, and
// redis-server; without them the suites that use it are skipped with one line (under CI, they fail).
import { type ChildProcess, execFileSync, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onPath, spawnTied } from '@animal-store/test-support';
import type { TestStore } from './backends.js';
import { heldWithin } from './waits.js';

/** Debian's PostgreSQL programs (initdb, pg_ctl), for a cluster of the test's own. */
export const clusterBin = ['/usr/lib/postgresql']
  .filter(existsSync)
  .flatMap((root) => readdirSync(root).map((version) => join(root, version, 'bin')))
  .find((dir) => existsSync(join(dir, 'pg_ctl')));

/** PostgreSQL refuses to run as root: as root, the cluster runs as the `postgres` user. */
export const runAs = (() => {
  if (process.getuid?.() !== 0) return {};
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    return { uid, gid };
  } catch {
    return undefined;
  }
})();

/** Why the partition suites cannot run here, or undefined when they can. */
export function partitionsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'they need root (network namespaces)';
  if (!onPath('ip')) return 'they need ip (Debian iproute2)';
  if (!clusterBin || !runAs?.uid) return 'they need pg_ctl (Debian postgresql) and a postgres user';
  if (!onPath('redis-server')) return 'they need redis-server (Debian redis-server)';
  return undefined;
}

/**
 * The suite `name` needs partitions: true when it can run; otherwise one line on stderr and false (under
 * CI=true a throw: CI runs every suite).
 */
export function partitionsAvailable(name: string): boolean {
  const missing = partitionsUnavailable();
  if (!missing) return true;
  const line = `${name}: ${missing}`;
  if (process.env.CI) throw new Error(`CI needs every suite; ${line}`);
  process.stderr.write(`skipping ${line}\n`);
  return false;
}

export type StoreName = 'postgres' | 'redis';

export type Partitionable = {
  /** What instance `n` (0, 1, …) is configured with: its own links to the stores. */
  store(n: number): TestStore;
  /** The test's own view of the stores, over unix sockets that no cut touches. */
  control: { DATABASE_URL: string; redisSocket: string };
  /** Drops every packet between instance `n` and the stores named, silently, until healed. */
  cut(n: number, ...stores: StoreName[]): void;
  heal(n: number, ...stores: StoreName[]): void;
  stop(): Promise<void>;
};

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
const mac = (ns: string | undefined, link: string) =>
  execFileSync('ip', [...(ns ? ['-n', ns] : []), '-o', 'link', 'show', link], { encoding: 'utf8' }).match(
    /link\/ether ([0-9a-f:]+)/,
  )?.[1] as string;

/** Namespaces left by test processes that died without stopping them (their pid is in the name). */
function sweepAbandoned() {
  const names = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).match(/^asp-\d+-\w+/gm) ?? [];
  for (const name of names) {
    const pid = Number(name.split('-')[1]);
    try {
      process.kill(pid, 0);
    } catch {
      const pids = spawnSync('ip', ['netns', 'pids', name], { encoding: 'utf8' }).stdout;
      for (const left of pids.split('\n').filter(Boolean)) spawnSync('kill', ['-9', left]);
      spawnSync('ip', ['netns', 'del', name]);
    }
  }
}

/** A second octet for 10.x.0.0/16 that no address of this machine uses. */
function freeNetwork(): number {
  const used = execFileSync('ip', ['-o', '-4', 'addr'], { encoding: 'utf8' });
  for (;;) {
    const octet = 128 + Math.floor(Math.random() * 120);
    if (!used.includes(` 10.${octet}.`)) return octet;
  }
}

/** PostgreSQL and Redis in a namespace of their own, reachable by `instances` server instances. */
export async function partitionableStores(instances: number): Promise<Partitionable> {
  sweepAbandoned();
  const id = Math.random().toString(16).slice(2, 6);
  const ns = `asp-${process.pid}-${id}`;
  const octet = freeNetwork();
  const folder = mkdtempSync(join(tmpdir(), 'animal-store-partition-'));
  chownSync(folder, runAs?.uid as number, runAs?.gid as number);
  const stops: (() => unknown)[] = [];
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) await step();
  };
  try {
    ip('netns', 'add', ns);
    stops.push(() => spawnSync('ip', ['netns', 'del', ns]));
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    // One link per instance and store: 10.<octet>.<subnet>.1 on the instance's side, .2 on the stores'.
    const subnet = (n: number, store: StoreName) => 2 * n + (store === 'redis' ? 2 : 1);
    const outside = (n: number, store: StoreName) => `as${id}${store[0]}${n}`;
    const inside = (n: number, store: StoreName) => `as${id}${store[0]}${n}x`;
    const address = (n: number, store: StoreName, end: 1 | 2) => `10.${octet}.${subnet(n, store)}.${end}`;
    const neighbour = (at: string[], address: string, lladdr: string, dev: string) =>
      ip(...at, 'neigh', 'replace', address, 'lladdr', lladdr, 'dev', dev, 'nud', 'permanent');
    // Fixed neighbour entries both ways: no ARP, so a cut is never reported as "host unreachable".
    const pin = (n: number, store: StoreName) => {
      neighbour([], address(n, store, 2), mac(ns, inside(n, store)), outside(n, store));
      neighbour(['-n', ns], address(n, store, 1), mac(undefined, outside(n, store)), inside(n, store));
    };
    for (let n = 0; n < instances; n++) {
      for (const store of ['postgres', 'redis'] as const) {
        ip('link', 'add', outside(n, store), 'type', 'veth', 'peer', 'name', inside(n, store));
        ip('link', 'set', inside(n, store), 'netns', ns);
        ip('addr', 'add', `${address(n, store, 1)}/24`, 'dev', outside(n, store));
        ip('-n', ns, 'addr', 'add', `${address(n, store, 2)}/24`, 'dev', inside(n, store));
        ip('link', 'set', outside(n, store), 'up');
        ip('-n', ns, 'link', 'set', inside(n, store), 'up');
        pin(n, store);
      }
    }

    // PostgreSQL, listening on every address of the namespace and on a unix socket in the folder.
    const bin = clusterBin as string;
    const data = join(folder, 'data');
    const asPostgres = {
      uid: runAs?.uid as number,
      gid: runAs?.gid as number,
      cwd: folder,
      encoding: 'utf8' as const,
    };
    const initdb = spawnSync(
      join(bin, 'initdb'),
      ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'],
      asPostgres,
    );
    if (initdb.status !== 0) throw new Error(`initdb: ${initdb.stderr}`);
    appendFileSync(join(data, 'pg_hba.conf'), 'host all all 10.0.0.0/8 trust\n');
    const options = `-p 5432 -k ${folder} -c listen_addresses=* -c fsync=off -c max_connections=200`;
    const pgCtl = (...args: string[]) =>
      spawnSync(
        'ip',
        [
          'netns',
          'exec',
          ns,
          'setpriv',
          `--reuid=${runAs?.uid}`,
          `--regid=${runAs?.gid}`,
          '--clear-groups',
          join(bin, 'pg_ctl'),
          ...args,
        ],
        { cwd: folder, encoding: 'utf8' },
      );
    const started = pgCtl('start', '-D', data, '-w', '-o', options, '-l', join(folder, 'postgres.log'));
    if (started.status !== 0) throw new Error(`pg_ctl start: ${started.stdout}${started.stderr}`);
    stops.push(() => pgCtl('stop', '-D', data, '-m', 'immediate'));

    // Redis, on every address of the namespace and on a unix socket in the folder; nothing on disk.
    const redisSocket = join(folder, 'redis.sock');
    const redis: ChildProcess = spawnTied(
      'ip',
      [
        'netns',
        'exec',
        ns,
        'redis-server',
        '--port',
        '6379',
        '--bind',
        '0.0.0.0',
        '--protected-mode',
        'no',
        '--unixsocket',
        redisSocket,
        '--unixsocketperm',
        '777',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        folder,
      ],
      { stdio: 'ignore' },
    );
    stops.push(async () => {
      if (redis.exitCode !== null) return;
      const exited = once(redis, 'exit');
      redis.kill('SIGKILL');
      await exited;
    });
    if (!(await heldWithin(() => existsSync(redisSocket), { timeout: 5_000, interval: 50 })))
      throw new Error('redis-server did not start in the namespace');
    stops.push(() => rmSync(folder, { recursive: true, force: true }));
    execFileSync(
      join(bin, 'psql'),
      ['-h', folder, '-U', 'postgres', '-c', 'CREATE DATABASE store', 'postgres'],
      { stdio: 'ignore' },
    );

    const links = (n: number, stores: StoreName[], state: 'up' | 'down') => {
      for (const store of stores.length ? stores : (['postgres', 'redis'] as const)) {
        ip('-n', ns, 'link', 'set', inside(n, store), state);
        if (state === 'up') pin(n, store);
      }
    };
    return {
      store: (n) => ({
        DATABASE_URL: `postgres://postgres@${address(n, 'postgres', 2)}:5432/store`,
        REDIS_URL: `redis://${address(n, 'redis', 2)}:6379`,
        REDIS_KEY_PREFIX: 'partition:',
      }),
      control: { DATABASE_URL: `postgres://postgres@/store?host=${folder}`, redisSocket },
      cut: (n, ...stores) => links(n, stores, 'down'),
      heal: (n, ...stores) => links(n, stores, 'up'),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
