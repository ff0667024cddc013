// The goals judged from bench reports, as tables: a full run, a run of the refusal alone, a busy box.
import { expect, it } from 'vitest';
import { goalTable, judge, type Measured, type Report } from './goals.js';

const measure = (reqPerSec: number, cpuUsPerRequest: number, others = 0.02, steal = 0.01): Measured => ({
  reqPerSec,
  cpuUsPerRequest,
  coresBusy: { others, steal },
});
const list = 'GET /v1/pets?limit=20';

const full: Report = {
  rows: [
    {
      scenario: list,
      measured: {
        server: measure(9000, 113),
        'bare-express': measure(10_000, 100),
        'validated Express': measure(9500, 125, 0.03),
        'usual Express': measure(6000, 171),
        '2.2.0': measure(9200, 110),
      },
      againstRatio: { reqPerSec: 0.98 },
    },
    {
      scenario: 'POST /v1/pets',
      measured: {
        server: measure(6500, 111, 0.4),
        'bare-express': measure(10_000, 73),
        '2.2.0': measure(7000, 100),
      },
      againstRatio: { reqPerSec: 0.93 },
    },
  ],
  refusals: [
    { target: 'server', answered: measure(6222, 163), refused: measure(8051, 126) },
    { target: '2.2.0', answered: measure(6337, 158), refused: measure(5338, 185) },
  ],
  against: { ref: '2.2.0' },
  coldStartMs: { server: 575 },
  peakRssUnderListLoadMb: 142.8,
  layers: [
    { layer: 'the store (queries, rows)', usPerRequest: 40 }, // no budget: validated Express's work too
    { layer: 'the request log (ours, pino)', usPerRequest: 6.2, budgetUs: 5 },
    { layer: 'metrics', usPerRequest: 1.5, budgetUs: 5 },
  ],
};

it('judges every goal of a full run, each with the box load of the runs behind it', () => {
  expect(judge(full).map((j) => [j.goal, j.measured, j.load, j.status])).toEqual([
    [
      'short list ≥ 0.85 × bare Express (throughput and CPU per request)',
      '0.90 throughput, 0.88 CPU (validation alone: 0.95, 0.80)',
      'others 0.03, steal 0.01 cores',
      'met',
    ],
    ['CPU per short list ≤ 300 µs', '113 µs', 'others 0.02, steal 0.01 cores', 'met'],
    ['short list ≥ 1.5 × the usual Express stack', '1.50', 'others 0.02, steal 0.01 cores', 'met'],
    [
      'no scenario below 0.7 × bare Express',
      'lowest 0.65 (POST /v1/pets)',
      'others 0.40, steal 0.01 cores',
      'missed',
    ],
    [
      "a 429 costs no more CPU than a 200 (this tree's servers)",
      'server 0.77, 2.2.0 1.17', // 2.2.0's refusal is shown, not judged
      'others 0.02, steal 0.01 cores',
      'met',
    ],
    [
      'no scenario more than 5 % slower than 2.2.0',
      'lowest 0.93 (POST /v1/pets)',
      'others 0.40, steal 0.01 cores',
      'missed',
    ],
    ['peak RSS under the list load ≤ 150 MB', '142.8 MB', '–', 'met'],
    ['cold start to the first 200 ≤ 1.0 s', '0.57 s', '–', 'met'],
    [
      'each of our layers ≤ its budget of CPU µs a request (--profile)',
      'the request log (ours, pino) 6.2 µs',
      '–',
      'missed',
    ],
  ]);
  const withinBudget = { ...full, layers: full.layers?.filter((l) => l.usPerRequest < 5 || !l.budgetUs) };
  expect(judge(withinBudget).at(-1)).toMatchObject({ measured: 'highest 1.5 µs', status: 'met' });
});

it('says what a partial run did not measure, and misses a 429 dearer than a 200', () => {
  const refusalOnly: Report = {
    rows: [],
    refusals: [{ target: 'server', answered: measure(6000, 150), refused: measure(5000, 180, 1.1, 0.3) }],
    coldStartMs: { server: 1200 },
    peakRssUnderListLoadMb: 0,
  };
  expect(judge(refusalOnly).map((j) => [j.goal, j.measured, j.load, j.status])).toEqual([
    ['short list ≥ 0.85 × bare Express', `no ${list} in this run`, '–', 'not measured'],
    [
      "a 429 costs no more CPU than a 200 (this tree's servers)",
      'server 1.20',
      'others 1.10, steal 0.30 cores',
      'missed',
    ],
    ['no scenario more than 5 % slower than a release', 'no --against in this run', '–', 'not measured'],
    ['cold start to the first 200 ≤ 1.0 s', '1.20 s', '–', 'missed'],
    [
      'each of our layers ≤ its budget of CPU µs a request (--profile)',
      'no --profile in this run',
      '–',
      'not measured',
    ],
  ]);
});

it('prints the judged goals as one Markdown table', () => {
  const table = goalTable(judge(full));
  expect(table.slice(0, 2)).toEqual([
    '| goal | measured | box load while measured | status |',
    '|---|---|---|---|',
  ]);
  expect(table).toHaveLength(2 + 9);
  expect(table[2]).toBe(
    '| short list ≥ 0.85 × bare Express (throughput and CPU per request) | 0.90 throughput, 0.88 CPU (validation alone: 0.95, 0.80) | others 0.03, steal 0.01 cores | met |',
  );
});
