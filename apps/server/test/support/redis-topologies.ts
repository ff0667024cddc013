// Real Redis topologies on loopback ports, for the suites and the failover tests: a primary with a replica
// watched by three Sentinels, and a Cluster of three primaries with a replica each. Every process runs in a
// temporary folder of its own, keeps nothing on disk but what Redis needs (a Sentinel's configuration, a
// Cluster node's nodes.conf), and is killed by `stop`.

import { type ChildProcess, execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { spawnTied } from '@animal-store/test-support';
import { Redis } from 'ioredis';

const run = promisify(execFile);

/** The primary name the test Sentinels watch. */
export const primaryName = 'animal-store';

const bindable = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });

/** `count` ports free on loopback now, outside the ephemeral range (a Cluster node needs two each). */
async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    if (!ports.includes(port) && (await bindable(port))) ports.push(port);
  }
  return ports;
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** One command to one node, on a connection of its own (closed after). */
export async function ask(port: number, ...command: (string | number)[]): Promise<unknown> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
  client.on('error', () => {});
  try {
    await client.connect();
    return await client.call(String(command[0]), ...command.slice(1).map(String));
  } finally {
    client.disconnect();
  }
}

type Node = { port: number; child: ChildProcess };

/** Until the node, when a replica, has its link to its primary up (its first sync done). */
const synced = (port: number) =>
  until(`the replica on ${port} to sync`, async () => {
    const info = (await ask(port, 'INFO', 'replication')) as string;
    return info.includes('role:master') || info.includes('master_link_status:up');
  });

function processes(dir: string) {
  const started: Node[] = [];
  return {
    started,
    async start(port: number, args: string[]): Promise<Node> {
      const child = spawnTied(
        'redis-server',
        [
          ...args,
          ...[
            '--port',
            String(port),
            '--bind',
            '127.0.0.1',
            '--dir',
            dir,
            '--dbfilename',
            `dump-${port}.rdb`,
          ],
          ...['--save', '', '--appendonly', 'no', '--repl-diskless-sync-delay', '0'],
        ],
        { stdio: 'ignore' },
      );
      const node = { port, child };
      started.push(node);
      await until(`redis-server on ${port}`, async () => (await ask(port, 'PING')) === 'PONG');
      return node;
    },
    async kill(node: Node) {
      if (node.child.exitCode !== null || node.child.signalCode !== null) return;
      const exited = once(node.child, 'exit');
      node.child.kill('SIGKILL');
      await exited;
    },
    async stopAll() {
      await Promise.all(started.map((node) => this.kill(node)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type SentinelSet = {
  url: string;
  /** A failover the Sentinels run on request (`SENTINEL FAILOVER`); resolves once they name the new primary. */
  failover(): Promise<number>;
  /** Kills the primary; resolves with the new one's port once the Sentinels have promoted it. */
  killPrimary(): Promise<{ port: number; promotedAt: number }>;
  /** Stops the Sentinel at `index` of the URL (SIGSTOP: connected, silent); the others run the failovers. */
  silence(index: number): void;
  stop(): Promise<void>;
};

/** A primary and a replica, watched by three Sentinels (quorum 2, down after 1 s). */
export async function startSentinels(): Promise<SentinelSet> {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-sentinel-'));
  const redis = processes(dir);
  try {
    const [primary, replica, ...sentinels] = await freePorts(5);
    const data = [await redis.start(primary as number, [])];
    data.push(await redis.start(replica as number, ['--replicaof', '127.0.0.1', String(primary)]));
    await synced(replica as number);
    for (const port of sentinels) {
      const conf = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        conf,
        [
          `sentinel monitor ${primaryName} 127.0.0.1 ${primary} 2`,
          `sentinel down-after-milliseconds ${primaryName} 1000`,
          `sentinel failover-timeout ${primaryName} 5000`,
          '',
        ].join('\n'),
      );
      await redis.start(port, [conf, '--sentinel']);
    }
    const sentinelPorts = sentinels as number[];
    const silent = new Set<number>();
    const speaking = () => sentinelPorts.filter((port) => !silent.has(port));
    const named = async (port = speaking()[0] as number) =>
      Number(((await ask(port, 'SENTINEL', 'get-master-addr-by-name', primaryName)) as string[])[1]);
    // Ready when every Sentinel knows the replica and the two other Sentinels (a kill needs their quorum).
    for (const port of sentinelPorts) {
      await until('the Sentinels to know each other and the replica', async () => {
        const known = (await ask(port, 'SENTINEL', 'sentinels', primaryName)) as unknown[];
        const followers = (await ask(port, 'SENTINEL', 'replicas', primaryName)) as unknown[];
        return known.length === 2 && followers.length === 1;
      });
    }
    const promoted = (from: number) =>
      until('the Sentinels to name a new primary', async () => {
        const now = await named();
        if (now === from) return undefined;
        const role = (await ask(now, 'ROLE')) as string[];
        return role[0] === 'master' ? now : undefined;
      });
    // After a failover, until the old primary replicates the new one and every Sentinel sees it so.
    const settled = async (port: number) => {
      for (const sentinel of speaking()) {
        await until('every Sentinel to agree on the primary and see its replica', async () => {
          if ((await named(sentinel)) !== port) return false;
          const replicas = (await ask(sentinel, 'SENTINEL', 'replicas', primaryName)) as string[][];
          return replicas.some((fields) => {
            const flags = fields[fields.indexOf('flags') + 1] ?? '';
            return !/s_down|o_down|disconnected/.test(flags);
          });
        });
      }
    };
    return {
      url: `redis+sentinel://${sentinelPorts.map((p) => `127.0.0.1:${p}`).join(',')}/${primaryName}`,
      async failover() {
        const from = await named();
        await ask(speaking()[0] as number, 'SENTINEL', 'FAILOVER', primaryName);
        const port = await promoted(from);
        await settled(port);
        // The old primary follows the new one and has its data: only then can it take over again.
        await until('the old primary to replicate the new one', async () => {
          const info = (await ask(from, 'INFO', 'replication')) as string;
          return info.includes(`master_port:${port}`) && info.includes('master_link_status:up');
        });
        return port;
      },
      async killPrimary() {
        const from = await named();
        const node = data.find((n) => n.port === from) as Node;
        await redis.kill(node);
        const port = await promoted(from);
        return { port, promotedAt: Date.now() };
      },
      silence(index) {
        const port = sentinelPorts[index] as number;
        redis.started.find((node) => node.port === port)?.child.kill('SIGSTOP');
        silent.add(port);
      },
      stop: () => redis.stopAll(),
    };
  } catch (error) {
    await redis.stopAll();
    throw error;
  }
}

export type RedisCluster = {
  url: string;
  /** The port of the primary serving `key`'s slot now. */
  primaryOf(key: string): Promise<number>;
  /** Kills `port`'s node; resolves once its replica serves its slots (the Cluster is ok again). */
  killPrimary(port: number): Promise<number>;
  /** Moves the slot of `key` to another primary, key by key (MIGRATE), as `redis-cli --cluster reshard` does. */
  migrateSlotOf(key: string): Promise<{ from: number; to: number }>;
  stop(): Promise<void>;
};

type ClusterNode = { id: string; port: number; primary: boolean; failed: boolean; slots: [number, number][] };

const clusterNodes = async (port: number): Promise<ClusterNode[]> =>
  ((await ask(port, 'CLUSTER', 'NODES')) as string)
    .trim()
    .split('\n')
    .map((line) => {
      const [id, address, flags, , , , , , ...slots] = line.split(' ');
      return {
        id: id as string,
        port: Number((address as string).split(/[:@]/)[1]),
        primary: (flags as string).includes('master'),
        failed: /fail|noaddr/.test(flags as string),
        slots: slots
          .filter((s) => /^\d/.test(s))
          .map((s) => {
            const [from, to = from] = s.split('-').map(Number);
            return [from, to] as [number, number];
          }),
      };
    });

/** A Cluster node's timeout once the Cluster is formed, and while its nodes meet (startCluster). */
const [nodeTimeoutMs, formingNodeTimeoutMs] = [1_000, 5_000];

/** Three primaries with a replica each (node timeout 1 s), every slot assigned. */
export async function startCluster(): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-cluster-'));
  const redis = processes(dir);
  try {
    const ports = await freePorts(12);
    const nodes: Node[] = [];
    for (let i = 0; i < 6; i++) {
      const [port, bus] = [ports[i] as number, ports[i + 6] as number];
      nodes.push(
        await redis.start(port, [
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          String(bus),
          '--cluster-config-file',
          `nodes-${port}.conf`,
          // 5 s while the nodes meet: a node drops a handshake that takes longer than the node timeout,
          // and on a loaded machine (a run's start) one took over 1 s: the others forgot that node, and
          // redis-cli --cluster create waited for it for good (a rehearsal hung 28 minutes). 1 s once formed.
          '--cluster-node-timeout',
          String(formingNodeTimeoutMs),
        ]),
      );
    }
    const seeds = nodes.map((n) => `127.0.0.1:${n.port}`);
    await run('redis-cli', ['--cluster', 'create', ...seeds, '--cluster-replicas', '1', '--cluster-yes'], {
      timeout: 120_000,
    });
    const ok = (port: number) =>
      until(`the Cluster to be ok at ${port}`, async () =>
        ((await ask(port, 'CLUSTER', 'INFO')) as string).includes('cluster_state:ok'),
      );
    for (const node of nodes) await ok(node.port);
    for (const node of nodes) await synced(node.port); // a replica that never synced cannot take over
    for (const node of nodes) await ask(node.port, 'CONFIG', 'SET', 'cluster-node-timeout', nodeTimeoutMs);
    const alive = () => nodes.filter((n) => n.child.exitCode === null && n.child.signalCode === null);
    const view = () => clusterNodes((alive()[0] as Node).port);
    const primaryOf = async (key: string) => {
      const slot = Number(await ask((alive()[0] as Node).port, 'CLUSTER', 'KEYSLOT', key));
      const owner = (await view()).find(
        (n) => n.primary && !n.failed && n.slots.some(([a, b]) => slot >= a && slot <= b),
      );
      if (!owner) throw new Error(`no primary serves slot ${slot}`);
      return owner.port;
    };
    return {
      url: `redis+cluster://${seeds.slice(0, 3).join(',')}`,
      primaryOf,
      async killPrimary(port) {
        const slot = (await view()).find((n) => n.port === port)?.slots[0]?.[0];
        await redis.kill(nodes.find((n) => n.port === port) as Node);
        return until('a replica to take over the killed primary', async () => {
          const owner = (await view()).find(
            (n) =>
              n.primary &&
              !n.failed &&
              n.slots.some(([a, b]) => (slot as number) >= a && (slot as number) <= b),
          );
          if (!owner || owner.port === port) return undefined;
          for (const node of alive()) await ok(node.port);
          return owner.port;
        });
      },
      async migrateSlotOf(key) {
        const slot = Number(await ask((alive()[0] as Node).port, 'CLUSTER', 'KEYSLOT', key));
        const all = await view();
        const source = all.find(
          (n) => n.primary && !n.failed && n.slots.some(([a, b]) => slot >= a && slot <= b),
        ) as ClusterNode;
        const target = all.find((n) => n.primary && !n.failed && n.id !== source.id) as ClusterNode;
        await ask(target.port, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', source.id);
        await ask(source.port, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', target.id);
        for (;;) {
          const keys = (await ask(source.port, 'CLUSTER', 'GETKEYSINSLOT', slot, 10)) as string[];
          if (keys.length === 0) break;
          await ask(source.port, 'MIGRATE', '127.0.0.1', target.port, '', 0, 5_000, 'KEYS', ...keys);
          await sleep(50); // keys move one batch at a time while the load goes on, as a reshard does
        }
        for (const node of all.filter((n) => n.primary && !n.failed)) {
          await ask(node.port, 'CLUSTER', 'SETSLOT', slot, 'NODE', target.id);
        }
        return { from: source.port, to: target.port };
      },
      stop: () => redis.stopAll(),
    };
  } catch (error) {
    await redis.stopAll();
    throw error;
  }
}
