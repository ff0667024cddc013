// What the container suites (test/image/) share: this checkout's image, named and built by the project's
// set-up (image-setup.ts), and how a suite runs it, calls it and removes what it made.
import { existsSync, readFileSync } from 'node:fs';
import { freePort, podman } from '@animal-store/test-support';
import { afterAll, beforeAll, expect, inject, vi } from 'vitest';
import { buildMarks } from './image-setup.js';
import { heldWithin } from './waits.js';

export { caBuildArgs, checkout, repo } from './image-setup.js';

/** This checkout's image; '' where podman is missing (the suites that run it skip). */
export const image = inject('image');

/**
 * Waits before the file's tests for this checkout's image, which the project's set-up builds from the start
 * of the run (image-setup.ts): done by now, unless the run is the container project alone.
 */
export function imageBuiltBeforeAll(): void {
  beforeAll(async () => {
    if (!image) return;
    const marks = buildMarks(image);
    const done = () => existsSync(marks.built) || existsSync(marks.failed);
    await vi.waitUntil(done, { timeout: 900_000, interval: 500 });
    if (!existsSync(marks.built))
      throw new Error(`the image's build failed:\n${readFileSync(marks.failed, 'utf8')}`);
  }, 900_000);
}

/** A name for a container or volume of this file's, `what` in it; each is removed after the file. */
export function containerNames(): (what: string) => string {
  const names: string[] = [];
  afterAll(async () => {
    for (const name of names) {
      await podman('rm', '--force', '--time', '0', name).catch(() => {});
      await podman('volume', 'rm', '--force', name).catch(() => {});
    }
  });
  return (what) => {
    const name = `animal-store-test-${process.pid}-${what}`;
    names.push(name);
    return name;
  };
}

/** Runs this checkout's image detached on the host's network with `env`; its URL. */
export const runImage = (name: string, env: Record<string, string>, ...options: string[]) =>
  runImageOf(image, name, env, ...options);

/** Runs `imageName` detached on the host's network with `env`; its URL, once ready. */
export async function runImageOf(
  imageName: string,
  name: string,
  env: Record<string, string>,
  ...options: string[]
) {
  const port = await freePort();
  const vars = Object.entries({ PORT: String(port), ...env }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  await podman('run', '--detach', '--name', name, ...vars, ...options, imageName);
  const url = `http://${env.HOST === '::1' ? '[::1]' : '127.0.0.1'}:${port}`;
  const ready = () =>
    fetch(`${url}/readyz`).then(
      (res) => res.ok,
      () => false,
    );
  if (!(await heldWithin(ready, { timeout: 20_000 })))
    throw new Error(`${name} never became ready:\n${await podman('logs', name)}`);
  return url;
}

/** A key created inside the container, with the image's own `animal-store-keys`. */
export const keyInside = async (name: string, ...args: string[]) =>
  (
    JSON.parse(await podman('exec', name, 'animal-store-keys', 'create', '--json', ...args)) as {
      key: string;
    }
  ).key;

// Bounded: a request nobody answers fails in 30 s, where fetch's own wait (5 minutes for the headers) outlasted
// the test's timeout and hid which step hung.
export const petsCall = (url: string, key: string, init: RequestInit & { idempotencyKey?: string } = {}) =>
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
export async function obedientlyAdmitted(urls: string[], key: string, attempts: number): Promise<number> {
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
