// The traffic customers really send, on one key over four server processes on one store (per project: a
// SQLite file, PostgreSQL, PostgreSQL + Redis, PgBouncer, Sentinel, Cluster), with the default ban terms
// (RATE_LIMIT_BAN_THRESHOLD 10, RATE_LIMIT_BAN_GRACE_SECONDS 5): a pool of obedient clients gets exactly
// the limit and is never banned; clients hammering a key are never admitted past its limit; a client that
// keeps sending while refused is banned once, after the grace.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { recheckMs } from '../../src/limits/lease-terms.js';
import { call, fleetForFile, keyOn } from '../support/harness.js';

const fleet = fleetForFile(4);
const { servers } = fleet;

const { ban } = loadConfig({}).limits;
const keyOf = (perMinute: number) => keyOn(fleet.store, perMinute);

type Answer = { status: number; code?: string; retryAfter: number; at: number };
async function send(i: number, key: string): Promise<Answer> {
  const res = await call(`${servers[i % servers.length]?.url}/v1/pets`, key);
  const at = performance.now();
  if (res.status === 200) {
    await res.arrayBuffer();
    return { status: 200, retryAfter: 0, at };
  }
  const { code } = (await res.json()) as { code: string };
  return { status: res.status, code, retryAfter: Number(res.headers.get('retry-after')), at };
}

const banLines = () =>
  servers.flatMap((s) => s.output().split('\n')).filter((l) => l.includes('key banned for sending'));

describe('real traffic on one key over four processes', () => {
  it('a pool of 50 obedient clients gets exactly the limit, is never banned, and is told the real wait', async () => {
    const key = await keyOf(200);
    const bansBefore = banLines().length;
    let admitted = 0;
    let lastAdmittedAt = 0;
    const refusals: Answer[] = [];
    const finals: Answer[] = [];
    // Each client sends back to back; told a second (points held elsewhere), it waits and goes on; told
    // longer (the window is used), it stops until the window's end.
    await Promise.all(
      Array.from({ length: 50 }, async (_, client) => {
        for (let i = 0; i < 200; i++) {
          const answer = await send(client + i, key);
          if (answer.status === 200) {
            admitted++;
            lastAdmittedAt = Math.max(lastAdmittedAt, answer.at);
            continue;
          }
          refusals.push(answer);
          if (answer.retryAfter > 1) return finals.push(answer);
          await sleep(answer.retryAfter * 1000);
        }
      }),
    );
    expect(admitted).toBe(200);
    expect(new Set(refusals.map((a) => a.code))).toEqual(new Set(['rate_limited']));
    expect(finals).toHaveLength(50);
    for (const final of finals) expect(final.retryAfter).toBeLessThanOrEqual(60);
    // Every 429 tells the real wait: one that asked a second (points held elsewhere) was followed by an
    // admission; once the last was admitted, every refusal asks for the window's end.
    const shortAfterLast = refusals.filter((a) => a.at > lastAdmittedAt && a.retryAfter <= 1);
    expect(shortAfterLast.length, 'refusals asking 1 s after the window was used').toBe(0);
    expect(banLines()).toHaveLength(bansBefore);
  });

  it('twenty clients hammering a key are never admitted past its limit (three rounds)', async () => {
    for (let round = 0; round < 3; round++) {
      const key = await keyOf(150);
      const answers = await Promise.all(
        Array.from({ length: 20 }, async (_, client) => {
          const seen: Answer[] = [];
          for (let i = 0; i < 12; i++) seen.push(await send(client + i, key));
          return seen;
        }),
      );
      const admitted = answers.flat().filter((a) => a.status === 200).length;
      expect(admitted, `round ${round}`).toBeLessThanOrEqual(150);
      expect(admitted, `round ${round}`).toBeGreaterThan(100);
    }
  });

  it('a client that keeps sending while refused is banned once, after the grace and the threshold', async () => {
    const key = await keyOf(5);
    const bansBefore = banLines().length;
    const answers: Answer[] = [];
    // Bounded in time, not in requests: refusals answered in half a millisecond send thousands within the
    // grace (5,000 of them took less than it on SQLite).
    const giveUpAt = performance.now() + ban.graceSeconds * 1000 + 20_000;
    for (let i = 0; answers.at(-1)?.code !== 'temporarily_banned'; i++) {
      if (performance.now() > giveUpAt) throw new Error('never banned');
      answers.push(await send(i, key));
    }
    const firstRefusal = answers.find((a) => a.status === 429)?.at ?? 0;
    const banned = answers.at(-1)?.at ?? 0;
    // Not before the grace of the first refusal (each process's own began within a moment of it), and
    // soon after it: the threshold's refusals at this client's pace.
    expect(banned - firstRefusal).toBeGreaterThanOrEqual(ban.graceSeconds * 1000 - 100);
    expect(banned - firstRefusal).toBeLessThan(ban.graceSeconds * 1000 + 5_000);
    // Every process learns of the ban within a second (recheckMs: what a refusal reads of the store is
    // kept that long per key); from then on each answers it.
    await sleep(recheckMs);
    for (let i = 0; i < 8; i++) expect((await send(i, key)).code).toBe('temporarily_banned');
    // One ban, one line, whichever processes saw the key past its threshold. The lines travel through the
    // children's stdout pipes: waited for, then counted.
    await expect.poll(() => banLines().length, { timeout: 3_000, interval: 50 }).toBeGreaterThan(bansBefore);
    await sleep(200); // and no second line after it
    expect(banLines()).toHaveLength(bansBefore + 1);
  });
});
