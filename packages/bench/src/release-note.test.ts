// The regression gate's note (release-note.ts): a changeset Changesets reads as the server's patch, holding
// the --against table and naming every scenario below 0.97 × the last release, in throughput or in CPU.
import parseChangeset from '@changesets/parse';
import { expect, it } from 'vitest';
import { releaseNote } from './release-note.js';
import { againstTable, type Row } from './report.js';
import { round as measure } from './rounds.fixture.js';

/** A scenario measured at `reqPerSec` and `cpuUs` against 2.2.0's 1,000 req/s and 100 µs. */
const row = (scenario: string, reqPerSec: number, cpuUs: number): Row => ({
  scenario,
  measured: { server: measure(reqPerSec, cpuUs), '2.2.0': measure(1000, 100) },
  againstRatio: { reqPerSec: reqPerSec / 1000, cpuUsPerRequest: cpuUs / 100, reqPerSecRange: [0.9, 1.1] },
});
const note = (rows: Row[]) =>
  releaseNote({
    against: '2.2.0',
    rows,
    table: againstTable({ rows, against: '2.2.0' }).slice(1),
    measuredAs: 'five rounds',
  });

it("is a changeset of the server's patch whose summary holds the --against table", () => {
  const rows = [row('GET /v1/pets?limit=20', 1010, 99), row('GET /v1/pets/{id}', 990, 101)];
  const { releases, summary } = parseChangeset(note(rows));
  expect(releases).toEqual([{ name: '@animal-store/server', type: 'patch' }]);
  expect(summary).toContain('Performance against 2.2.0 (five rounds):');
  for (const line of againstTable({ rows, against: '2.2.0' }).slice(1)) expect(summary).toContain(line);
  // 0.99 and 0.99: within the gate.
  expect(summary).toContain('No scenario is below 0.97 × 2.2.0.');
});

it('names each scenario below 0.97 × the last release, in throughput or in CPU per request, with both figures', () => {
  const { summary } = parseChangeset(
    note([
      row('GET /v1/pets?limit=20', 950, 100),
      row('GET /v1/pets/{id}', 1000, 105),
      row('POST /v1/pets', 970, 103),
      row('GET /v1/pets?limit=100&status=available', 1200, 80),
      row('20/80 POST/list mix', 969.6, 100), // printed 0.97
    ]),
  );
  const named = summary.split('\n').filter((line) => line.startsWith('- '));
  expect(named).toEqual([
    '- GET /v1/pets?limit=20: 0.95 × in throughput, 1.00 × in CPU',
    '- GET /v1/pets/{id}: 1.00 × in throughput, 0.95 × in CPU',
  ]);
  expect(summary).toContain('Below 0.97 × 2.2.0 (this release / 2.2.0; higher is faster):');
  expect(summary).not.toContain('No scenario is below');
});

it('says which scenarios it could not judge: every round of either server answered nothing', () => {
  const starved: Row = {
    ...row('POST /v1/pets', 0, 100),
    againstRatio: {
      reqPerSec: Number.NaN,
      cpuUsPerRequest: Number.NaN,
      reqPerSecRange: [Infinity, -Infinity],
    },
  };
  const { summary } = parseChangeset(note([row('GET /v1/pets/{id}', 1000, 100), starved]));
  expect(summary).toContain('Every round of these answered nothing:\n\n- POST /v1/pets: not measured');
  expect(summary).not.toContain('NaN ×');
});
