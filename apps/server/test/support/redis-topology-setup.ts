// The global set-up of the projects that run the suites on Redis Sentinel and on Redis Cluster
// (vitest.config.ts): the topology of the project's name, started on loopback ports for the whole project
// (test/support/redis-topologies.ts), its URL given to the tests (backends.ts: redisUrl), stopped after.
import type { TestProject } from 'vitest/node';
import { startCluster, startSentinels } from './redis-topologies.js';

export default async function setup(project: TestProject) {
  const topology = project.name.endsWith('+sentinel') ? 'sentinel' : 'cluster';
  const redis = topology === 'sentinel' ? await startSentinels() : await startCluster();
  project.provide('redisUrl', redis.url);
  project.provide('redisTopology', topology);
  return () => redis.stop();
}
