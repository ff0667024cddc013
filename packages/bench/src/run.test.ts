// The bench's command line (run.ts), as a user meets it: --help, a mistyped option, a run with and without --against.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { releasesOf } from '@animal-store/test-support';
import parseChangeset from '@changesets/parse';
import { expect, it } from 'vitest';
import { root } from './server-command.js';

const run = fileURLToPath(new URL('../dist/run.js', import.meta.url));
const bench = (...args: string[]) => spawnSync(process.execPath, [run, ...args], { encoding: 'utf8' });
/** The JSON report a run wrote (its path on the `written:` line of `stdout`), read and removed. */
function writtenReport(stdout: string) {
  const written = /^written: (.+)$/m.exec(stdout)?.[1] as string;
  const report = JSON.parse(readFileSync(written, 'utf8'));
  rmSync(written);
  return report;
}
// A start of the built bench loads the server's package: 0.7 s on a quiet machine, 8 s once with both
// cores busy (CI), past vitest's default 5 s. Timed by the suite's hook, not by the start's speed.
const slowStart = { timeout: 60_000 };

it.each(['--help', '-h'])('%s prints every option and measures nothing', slowStart, (flag) => {
  const { status, stdout, stderr } = bench(flag);
  expect(status).toBe(0);
  for (const option of [
    '--duration',
    '--connections',
    '--rounds',
    '--scenario',
    '--backend',
    '--profile',
    '--against',
  ])
    expect(stdout).toContain(option);
  expect(stderr).toBe('');
});

it('an unknown option is one line naming it, the usage, and exit 2, without a stack trace', slowStart, () => {
  const { status, stderr, stdout } = bench('--durration', '5');
  expect(status).toBe(2);
  expect(stderr.split('\n')[0]).toMatch(/^pnpm bench: .*--durration/);
  expect(stderr).toContain('Usage: pnpm bench');
  expect(stderr).not.toMatch(/\n\s+at /);
  expect(stdout).toBe('');
});

it(
  '--against a ref that names no commit is one line and exit 2, before anything is built or started',
  slowStart,
  () => {
    const { status, stderr, stdout } = bench('--against', 'no-such-ref-anywhere');
    expect(status).toBe(2);
    expect(stderr).toBe(
      'pnpm bench: --against no-such-ref-anywhere: neither a release of docs/releasing.md nor a commit of this clone\n',
    );
    expect(stdout).toBe('');
  },
);

it(
  '--release-note without --against is one line and exit 2: the note compares with a release',
  slowStart,
  () => {
    const { status, stderr, stdout } = bench('--release-note', 'note.md');
    expect(status).toBe(2);
    expect(stderr).toBe(
      'pnpm bench: --release-note needs --against <the last release>: the note compares this tree with it\n',
    );
    expect(stdout).toBe('');
  },
);

// The last release, whose build (once per machine) the upgrade tests share: a commit is built apart the
// same way whichever it is (test-support's builtCommit), and a new one costs minutes of both cores.
const latest = releasesOf(root).at(-1) as { version: string; commit: string };

it(`--against ${latest.version} builds that commit apart, seeds its own store through its keys command and API, prints this tree / it per scenario, and --release-note writes it as the server's changeset`, {
  timeout: 900_000,
}, () => {
  const scratch = mkdtempSync(join(tmpdir(), 'animal-store-bench-note-'));
  const noteFile = join(scratch, 'performance.md');
  const { status, stdout, stderr } = bench(
    '--release-note',
    noteFile,
    '--against',
    latest.version,
    '--duration',
    '1',
    '--scenario',
    '/v1/pets/{id}',
    '--rounds',
    '2',
  );
  expect(stderr).not.toMatch(/\n\s+at /);
  expect(status).toBe(0);
  // One row: the single pet (id 500: the seed reached it), both answered with no error; the ratio is the
  // median of the two rounds' own, within their range.
  const row = stdout
    .split('\n')
    .find((line) =>
      /^\| GET \/v1\/pets\/\{id\} \| \d+ \| \d+ \| \d+\.\d\d \| \d+\.\d\d–\d+\.\d\d \|/.test(line),
    );
  expect(stdout).toContain(
    `| scenario | this tree req/s | ${latest.version} req/s | this tree / ${latest.version} | lowest–highest round |`,
  );
  expect(row).toBeDefined();
  const report = writtenReport(stdout);
  expect(report.against).toEqual({ ref: latest.version, commit: latest.commit });
  const measured = report.rows[0].measured;
  const earlier = measured[latest.version];
  expect(earlier.reqPerSec).toBeGreaterThan(0);
  expect([earlier.non2xx, earlier.errors, measured.server.non2xx]).toEqual([0, 0, 0]);
  const { reqPerSec, reqPerSecRange } = report.rows[0].againstRatio;
  expect(reqPerSec).toBeGreaterThanOrEqual(reqPerSecRange[0]);
  expect(reqPerSec).toBeLessThanOrEqual(reqPerSecRange[1]);
  expect(reqPerSecRange[0]).toBeGreaterThan(0);
  // The release note: the server's patch, holding the row as printed, and its verdict on the gate.
  expect(stdout).toContain(`release note: ${noteFile}\n`);
  const { releases, summary } = parseChangeset(readFileSync(noteFile, 'utf8'));
  rmSync(scratch, { recursive: true });
  expect(releases).toEqual([{ name: '@animal-store/server', type: 'patch' }]);
  expect(summary).toContain(row as string);
  expect(summary).toMatch(
    new RegExp(
      `^Performance against ${latest.version} \\(\`pnpm bench --against ${latest.version} --rounds 2 --duration 1 --connections 10\`, Node v\\d+`,
      'm',
    ),
  );
  expect(summary).toMatch(/^(No scenario is below 0\.97 × |Below 0\.97 × )/m);
});

it('a scenario without --against is measured against bare Express and printed, exit 0; --profile prices our layers against their budget', {
  timeout: 300_000,
}, () => {
  const { status, stdout, stderr } = bench('--duration', '1', '--scenario', '/v1/pets/{id}', '--profile');
  for (const [, summary] of stdout.matchAll(/^profile summary: (.+)$/gm))
    for (const file of [summary as string, (summary as string).replace(/\.summary\.txt$/, '')]) rmSync(file);
  expect(stderr).not.toMatch(/\n\s+at /);
  expect(status).toBe(0);
  expect(stdout).toMatch(/^\| GET \/v1\/pets\/\{id\} \| \d+ \| \d+ \| \d+ \| \d+\.\d\d \|/m);
  expect(stdout).not.toContain('this tree /');
  // Each of our layers with its CPU a request and its budget, from the server's own profile.
  for (const layer of ['identifying the key (hash, cache)', 'the rate limit (policy, leases, bans, headers)'])
    expect(stdout).toMatch(
      new RegExp(`^\\| ${layer.replace(/[()]/g, '\\$&')} \\| \\d+\\.\\d \\| ≤ 5 \\|$`, 'm'),
    );
  expect(stdout).toMatch(
    /^\| each of our layers ≤ its budget of CPU µs a request \(--profile\) \| .+ \| – \| (met|missed) \|$/m,
  );
  const report = writtenReport(stdout);
  expect(report.rows).toHaveLength(1);
  expect(report.rows[0].againstRatio).toBeUndefined();
  expect(report.rows[0].measured.server.non2xx).toBe(0);
  expect(report.layers.length).toBeGreaterThan(5);
});

it("prints a refusal's cost beside an answer's: the same request by a limited key (429) and by an unlimited one (200)", {
  timeout: 300_000,
}, () => {
  const { status, stdout, stderr } = bench('--duration', '1', '--scenario', 'refusal');
  expect(stderr).not.toMatch(/\n\s+at /);
  expect(status).toBe(0);
  expect(stdout).toContain(
    '| the cost of a refusal (GET /v1/pets/{id}) | 200 CPU µs/req | 429 CPU µs/req | 429 / 200 |',
  );
  expect(stdout).toMatch(/^\| server \| \d+ \| \d+ \| \d+\.\d\d \| \d+ \| \d+ \| – \|$/m);
  // No scenario ran: the scenarios' tables are not printed, not even their headers.
  expect(stdout).not.toContain('| scenario |');
  const report = writtenReport(stdout);
  const [server] = report.refusals;
  expect(server.target).toBe('server');
  expect([server.answered.non2xx, server.answered.errors, server.refused.errors]).toEqual([0, 0, 0]);
  // The limited key's requests refused, all but the first of its minute (one a minute).
  expect(server.refused.non2xx).toBeGreaterThan(100);
  // The goals judged from this run (goals.ts): the refusal's, with the box's load; the rest not measured.
  expect(stdout).toMatch(
    /^\| a 429 costs no more CPU than a 200 \(this tree's servers\) \| server \d+\.\d\d \| others \d+\.\d\d, steal \d+\.\d\d cores \| (met|missed) \|$/m,
  );
  expect(report.goals.map((g: { status: string }) => g.status)).toContain('not measured');
});
