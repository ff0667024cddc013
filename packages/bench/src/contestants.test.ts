// The Express contestants as the bench starts them (built, on a SQLite file of their own): bare Express does
// the job and nothing else, the validated one refuses what the contract refuses and answers what it allows,
// as the server's own validation does, and the usual stack limits a key before it reads the body.

import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteStore } from '@animal-store/server';
import { listeningUrl, type Spawned, spawnUntilReady, tempDatabase } from '@animal-store/test-support';
import { afterAll, beforeAll, expect, it } from 'vitest';

const databaseUrl = tempDatabase('bench-contestants-');
let authorization = '';
let oncePerMinute = '';
const started: Spawned[] = [];

/** A built contestant started on the test's file; its base URL once it prints its readiness line. */
async function contestant(name: string): Promise<string> {
  const spawned = await spawnUntilReady(
    process.execPath,
    [fileURLToPath(new URL(`../dist/${name}.js`, import.meta.url))],
    {
      env: { ...process.env, DATABASE_URL: databaseUrl, PORT: '0' },
      ready: (output) => listeningUrl(output) !== undefined,
    },
  );
  started.push(spawned);
  return listeningUrl(spawned.output()) as string;
}
const get = (base: string, path: string) => fetch(`${base}${path}`, { headers: { authorization } });

beforeAll(async () => {
  const { store } = openSqliteStore(databaseUrl);
  await store.pets.create({ name: 'Rex', categoryId: 1, status: 'available' }, () => {});
  authorization = `Bearer ${(await store.keys.create({ plan: 'enterprise', quota: { perMinute: 1e6, perDay: 1e9 }, label: 'contestants' })).key}`;
  const once = await store.keys.create({
    plan: 'enterprise',
    quota: { perMinute: 1, perDay: 100 },
    label: 'once',
  });
  oncePerMinute = `Bearer ${once.key}`;
  await store.close();
});
afterAll(async () => {
  await Promise.all(started.map((spawned) => spawned.stop()));
  rmSync(dirname(databaseUrl), { recursive: true, force: true });
});

it('validated Express refuses a query the contract refuses, where bare Express answers it', {
  timeout: 60_000,
}, async () => {
  const [bare, validated] = await Promise.all([contestant('bare-express'), contestant('validated-express')]);
  const outOfRange = '/v1/pets?limit=1000';
  expect((await get(bare, outOfRange)).status).toBe(200);
  const refused = await get(validated, outOfRange);
  expect(refused.status).toBe(400);
  expect((await refused.json()).message).toContain('limit');
  // What the contract allows is answered alike, its response judged against the contract on the way out.
  const [plain, checked] = await Promise.all([
    get(bare, '/v1/pets?limit=5'),
    get(validated, '/v1/pets?limit=5'),
  ]);
  expect([plain.status, checked.status]).toEqual([200, 200]);
  expect(await checked.json()).toEqual(await plain.json());
  expect((await fetch(`${validated}/v1/pets`)).status).toBe(401);
});

it('the usual Express stack refuses a key over its limit before reading the body, as a team would order it', {
  timeout: 60_000,
}, async () => {
  const usual = await contestant('usual-express');
  const post = () =>
    fetch(`${usual}/v1/pets`, {
      method: 'POST',
      headers: { authorization: oncePerMinute, 'content-type': 'application/json' },
      body: '{not json',
    });
  expect((await post()).status).toBe(400); // within the limit: the body parser refuses it
  expect((await post()).status).toBe(429); // over it: refused before the body is parsed
});
