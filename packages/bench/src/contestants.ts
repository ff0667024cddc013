// The bench's contestants: each a process started on a free port, ready once it answers a list of pets, and
// stopped when the bench exits however it ends; and the store every one of them is seeded with.
import { type ChildProcess, spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { Store } from '@animal-store/server';
import type { Target } from './measure.js';

const statuses = ['available', 'pending', 'sold'] as const;
/** The pets every store is seeded with (ids 1 to 1,000 in a new store). */
export const pets = Array.from({ length: 1000 }, (_, i) => ({
  name: `Pet ${i}`,
  categoryId: 1 + (i % 10),
  status: statuses[i % 3] as 'available',
}));

/** Seeds a store with the pets and one enterprise key whose limits the load never reaches; its secret. */
export async function seed(store: Store): Promise<string> {
  for (const pet of pets) await store.pets.create(pet, () => {});
  const { key } = await store.keys.create({
    plan: 'enterprise',
    quota: { perMinute: 1e12, perDay: 1e12 },
    label: 'bench',
  });
  return key;
}

/** A key of one request a minute: past its first, every request is refused (the refusal's cost). */
export const limitedKey = async (store: Store) =>
  `Bearer ${(await store.keys.create({ plan: 'enterprise', quota: { perMinute: 1, perDay: 1e12 }, label: 'limited' })).key}`;

// Every contestant started, stopped when the bench exits however it ends: one that failed midway left them
// running, holding the output pipes of whoever started the bench (a test's spawnSync waited for good).
const contestants = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of contestants)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
});

/**
 * Starts `name` (Node with `args`, in production, on a free port, with `env`), and waits until it answers a
 * list of pets to `authorization`; how long that took is its cold start.
 */
export async function start(
  name: string,
  args: string[],
  env: Record<string, string>,
  authorization: string,
): Promise<Target & { coldStartMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    env: { ...process.env, PORT: '0', NODE_ENV: 'production', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  contestants.add(child);
  let output = '';
  child.stdout?.on('data', (d) => {
    if (output.length < 4096) output += d; // keep draining the logs; remember only the start
  });
  while (!/"url":"http/.test(output)) {
    if (child.exitCode !== null) throw new Error(`${name} exited:\n${output}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  const url = /"url":"(http:[^"]+)"/.exec(output)?.[1] as string;
  const ready = async () =>
    (await fetch(`${url}/v1/pets`, { headers: { authorization } }).catch(() => undefined))?.status === 200;
  while (!(await ready())) await new Promise((r) => setTimeout(r, 5));
  return { name, url, child, coldStartMs: performance.now() - started };
}

/** Stops every target, one after the other, each waited for. */
export async function stopAll(targets: Target[]): Promise<void> {
  for (const target of targets) {
    target.child.kill('SIGTERM');
    await new Promise((r) => target.child.once('exit', r));
  }
}
