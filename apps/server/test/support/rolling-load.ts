// A rolling upgrade's load and its checks, shared by the upgrade rehearsals (processes:
// own-engines/upgrade-from-every-release.test.ts; containers: image/upgrade.test.ts): two loops writing
// pets and one spending a limited key through whichever instances serve at the moment, and what a roll must
// keep (every acknowledged pet stored, the limited key admitted exactly its limit).
import { expect } from 'vitest';
import { rawSql, type TestStore } from './backends.js';
import { call } from './harness.js';

/** An instance of this release (`current`) or of an earlier one, at `url`. */
export type Instance = { release: string; url: string; stop: () => Promise<number | null> };

export const settle = () => new Promise((r) => setTimeout(r, 1_500));
/** The limited key's day (and minute): spent while old and new serve side by side. */
export const perDay = 400;
/** The spender keeps asking past its limit: no ban. */
export const noBans = { RATE_LIMIT_BAN_THRESHOLD: '1000000' };

/**
 * The load: two loops creating pets and one spending `limitedKey`, each request to the next instance
 * that serves. A request no instance took (refused: nothing was sent) is sent again; every other answer
 * is kept, and so is every request a connection was closed under (its body, and the release it was sent
 * to).
 */
export function load(serving: Instance[], writerKey: string, limitedKey: string) {
  let on = true;
  const created: number[] = [];
  const failed: string[] = [];
  const resets: { release: string; name?: string }[] = [];
  let admitted = 0;
  let turn = 0;
  const send = async (key: string, init?: RequestInit): Promise<Response | { reset: string }> => {
    for (;;) {
      const instance = serving[turn++ % serving.length] as Instance;
      try {
        return await call(`${instance.url}/v1/pets`, key, init);
      } catch (error) {
        const code = (error as { cause?: { code?: string } }).cause?.code;
        if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return { reset: instance.release };
        if (code !== 'ECONNREFUSED') throw error;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  };
  const writer = async (n: number) => {
    for (let i = 0; on; i++) {
      const name = `Roll ${n}-${i}`;
      const res = await send(writerKey, { method: 'POST', body: JSON.stringify({ name, categoryId: 1 }) });
      if ('reset' in res) resets.push({ release: res.reset, name });
      else if (res.status === 201) created.push(((await res.json()) as { id: number }).id);
      else failed.push(`POST ${res.status} ${await res.text()}`);
    }
  };
  const spender = async () => {
    while (on) {
      const res = await send(limitedKey);
      if ('reset' in res) {
        resets.push({ release: res.reset });
        continue;
      }
      await res.arrayBuffer();
      if (res.status === 200) admitted++;
      else if (res.status !== 429) failed.push(`GET ${res.status}`);
      await new Promise((r) => setTimeout(r, 40)); // about 25 a second: the day spent during the roll
    }
  };
  const loops = [writer(0), writer(1), spender()];
  return {
    get admitted() {
      return admitted;
    },
    async stop() {
      on = false;
      await Promise.all(loops);
      return { created, failed, resets };
    },
  };
}

/**
 * `limitedKey` spent on `serving`, beside the load's own spender, until a refusal says the day is used (a
 * wait longer than a minute; a shorter one is a lease still out elsewhere, or the minute): how many more
 * it admitted.
 */
export async function spendTheRest(serving: Instance[], limitedKey: string): Promise<number> {
  let admitted = 0;
  for (let i = 0, deadline = Date.now() + 90_000; ; i++) {
    if (Date.now() > deadline) throw new Error(`the day never said used up (${admitted} more admitted)`);
    const res = await call(`${(serving[i % serving.length] as Instance).url}/v1/pets`, limitedKey);
    await res.arrayBuffer();
    if (res.status === 200) admitted++;
    else if (Number(res.headers.get('retry-after')) > 60) return admitted;
    else await new Promise((r) => setTimeout(r, 100));
  }
}

/** How many of `limitedKey`'s requests to `serving` are admitted over two seconds. */
export async function admittedOver2s(serving: Instance[], limitedKey: string): Promise<number> {
  let admitted = 0;
  for (let i = 0, end = Date.now() + 2_000; Date.now() < end; i++) {
    const res = await call(`${(serving[i % serving.length] as Instance).url}/v1/pets`, limitedKey);
    await res.arrayBuffer();
    if (res.status === 200) admitted++;
    await new Promise((r) => setTimeout(r, 20));
  }
  return admitted;
}

/** What the store holds: every pet's id and name. */
export async function storedPets(store: TestStore) {
  const sql = await rawSql(store);
  try {
    const rows = (await sql.query('SELECT id, name FROM pets', [])) as {
      id: number | string;
      name: string;
    }[];
    return { ids: new Set(rows.map((r) => Number(r.id))), names: new Set(rows.map((r) => r.name)) };
  } finally {
    await sql.close();
  }
}

/**
 * Rolls `serving` to instances `next` starts, one at a time (start one and put it in, then take the
 * oldest out and stop it: a clean exit), as docs/upgrading.md says, `count` times.
 */
export async function roll(serving: Instance[], next: () => Promise<Instance>, count: number) {
  for (let i = 0; i < count; i++) {
    serving.push(await next());
    await settle();
    const out = serving.shift() as Instance;
    expect(await out.stop()).toBe(0);
    await settle();
  }
}

/**
 * The whole rehearsal on `serving` (started on the old release), with the two keys made there: the load,
 * the change to this release (`forward`), the rest of the day spent, the change back (`back`), and what it
 * must keep: no request failed, every acknowledged pet stored, the limited key admitted exactly perDay, the
 * rollback admitting no more. The requests a stop closed the connection under are returned, with the
 * stored pets' names, for the caller to judge (a roll of two instances resets none; a restart of one may).
 */
export async function rehearse(
  {
    serving,
    store,
    writerKey,
    limitedKey,
  }: { serving: Instance[]; store: TestStore; writerKey: string; limitedKey: string },
  forward: () => Promise<void>,
  back: () => Promise<void>,
) {
  const traffic = load(serving, writerKey, limitedKey);
  await settle();
  await forward();
  const rest = await spendTheRest(serving, limitedKey);
  expect(traffic.admitted + rest).toBe(perDay);
  await back();
  const { created, failed, resets } = await traffic.stop();
  expect(failed).toEqual([]);
  expect(created.length).toBeGreaterThan(50);
  const stored = await storedPets(store);
  expect(created.filter((id) => !stored.ids.has(id))).toEqual([]);
  expect(traffic.admitted + rest + (await admittedOver2s(serving, limitedKey))).toBe(perDay);
  return { resets, storedNames: stored.names };
}
