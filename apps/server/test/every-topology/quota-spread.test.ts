// The whole plan for a client that obeys Retry-After, however its requests are spread over four server
// processes on one store (per project: a SQLite file, PostgreSQL, PostgreSQL + Redis, Sentinel, Cluster):
// round-robin, sticky after a spread, a process going idle, one stopping. Before the window is used up,
// the only 429s it meets ask at most about a second (points held in another process's lease come back
// within holdMs); the headers never say 0 while a request is still admitted, and never rise between one
// process's answers.
import { describe, expect, it } from 'vitest';
import { holdMs } from '../../src/limits/lease-terms.js';
import { call, fleetEnv, fleetForFile, keyOn, startProcess } from '../support/harness.js';

// Threshold 1: a client that were refused twice for nothing in a minute would be banned.
const strict = { RATE_LIMIT_BAN_THRESHOLD: '1', RATE_LIMIT_BAN_GRACE_SECONDS: '0' };
const fleet = fleetForFile(4, strict);
const { servers } = fleet;

/** Which of the four answers request `i` (the admitted count so far is `admitted`). */
type Spread = (i: number, admitted: number) => number;

type Answer = { server: number; status: number; code?: string; retryAfter?: number; remaining: number };

/**
 * An obedient client: one request at a time, spread as `spread` says; after a 429 it waits what Retry-After
 * says. Goes on until `limit` were admitted, then until the refusal that asks a longer wait than holdMs.
 */
async function obedient(
  key: string,
  limit: number,
  spread: Spread,
  onAdmitted?: (admitted: number) => Promise<void>,
) {
  const answers: Answer[] = [];
  let admitted = 0;
  for (let i = 0; i < limit * 2 + 20; i++) {
    const server = spread(i, admitted);
    const res = await call(`${servers[server]?.url}/v1/pets`, key);
    const answer: Answer = {
      server,
      status: res.status,
      remaining: Number(res.headers.get('x-ratelimit-remaining')),
    };
    answers.push(answer);
    if (res.status === 200) {
      await res.arrayBuffer();
      admitted++;
      await onAdmitted?.(admitted);
      continue;
    }
    answer.code = ((await res.json()) as { code: string }).code;
    answer.retryAfter = Number(res.headers.get('retry-after'));
    if (admitted >= limit && answer.retryAfter > holdMs / 1000) return answers;
    await new Promise((resolve) => setTimeout(resolve, (answer.retryAfter ?? 1) * 1000));
  }
  throw new Error(`no final refusal after ${answers.length} requests`);
}

/** What a spread must give: the whole limit, short waits before it, headers that agree with each other. */
function expectWholePlan(answers: Answer[], limit: number) {
  const admittedAt = answers.flatMap((a, i) => (a.status === 200 ? [i] : []));
  expect(admittedAt).toHaveLength(limit);
  const last = admittedAt.at(-1) ?? 0;
  const before = answers.slice(0, last).filter((a) => a.status !== 200);
  expect(before.map((a) => a.code)).toEqual(before.map(() => 'rate_limited')); // never banned
  expect(before.every((a) => (a.retryAfter ?? 0) <= holdMs / 1000)).toBe(true);
  // never 0 while a request is still admitted
  expect(answers.slice(0, last).filter((a) => a.status === 200 && a.remaining === 0)).toEqual([]);
  expect(answers.at(-1)).toMatchObject({ status: 429, code: 'rate_limited', remaining: 0 });
  // never rising between one process's answers
  for (let server = 0; server < servers.length; server++) {
    const told = answers.filter((a) => a.server === server && a.status === 200).map((a) => a.remaining);
    expect(told, `process ${server}`).toEqual([...told].sort((x, y) => y - x));
  }
}

const keyOf = (perMinute: number, perDay: number) => keyOn(fleet.store, perMinute, perDay);

const roundRobin: Spread = (i) => i % 4;

describe('a client that obeys Retry-After, spread over four processes on one store', () => {
  it.each([
    ['free (60 a minute), round-robin', 60, 1_000, roundRobin],
    [
      'pro (300 a minute), ten requests over the four, then the rest to one',
      300,
      10_000,
      (i: number) => (i < 10 ? i % 4 : 0),
    ],
    ['120 a minute and 120 a day, round-robin', 120, 120, roundRobin],
    [
      'pro, round-robin over four, then one goes idle',
      300,
      10_000,
      (_: number, admitted: number) => (admitted < 20 ? admitted % 4 : admitted % 3),
    ],
    [
      'enterprise (1,000 a minute), bursts of 25 per process in turn',
      1_000,
      100_000,
      (i: number) => Math.floor(i / 25) % 4,
    ],
  ] as const)(
    '%s: gets the whole limit, and waits at most a second before it',
    async (_, perMinute, perDay, spread) => {
      const key = await keyOf(perMinute, perDay);
      const answers = await obedient(key, perMinute, spread);
      expectWholePlan(answers, perMinute);
    },
  );

  it('one process stopping gracefully mid-window: the others admit the rest of the limit', async () => {
    const key = await keyOf(200, 10_000);
    const extra = await startProcess(fleetEnv(fleet.store, strict));
    servers.push(extra);
    try {
      let stopped = false;
      const answers = await obedient(
        key,
        200,
        (i) => (stopped ? i % 4 : i % 5),
        async (admitted) => {
          if (admitted !== 100 || stopped) return;
          await extra.stop(); // gives its lease's unused points back
          stopped = true;
        },
      );
      servers.pop();
      expectWholePlan(answers, 200);
    } finally {
      await extra.stop();
      if (servers.includes(extra)) servers.pop();
    }
  });
});
