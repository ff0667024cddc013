// An idle instance's /metrics, as the shipped alerts read them (deploy/prometheus/): nothing that fires at
// rest, and every series an alert counts the increase of present from the start.
import { describe, expect, it } from 'vitest';
import { planNames } from '../../src/plans.js';
import { backend } from '../support/backends.js';
import { type TestServer, withServer } from '../support/harness.js';

let server: TestServer;
withServer((started) => {
  server = started;
});

const scrape = async () => (await fetch(`${server.url}/metrics`)).text();

describe(`an idle instance's metrics (${backend})`, () => {
  it('animal_store_store_waiting reads 0 at every scrape (AnimalStoreStoreWaiting must not fire at rest; it read 1 on PostgreSQL)', async () => {
    const reads: number[] = [];
    for (let i = 0; i < 20; i++)
      reads.push(Number(/^animal_store_store_waiting (\S+)$/m.exec(await scrape())?.[1]));
    expect(reads).toEqual(Array(20).fill(0));
  });

  it("every plan's bans counter is there at 0 before any ban, so that a first ban storm is an increase", async () => {
    const text = await scrape();
    for (const plan of planNames)
      expect(text, plan).toMatch(new RegExp(`^animal_store_bans_started_total\\{plan="${plan}"\\} 0$`, 'm'));
  });
});
