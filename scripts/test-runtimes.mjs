// `pnpm test:runtimes`: the suites that must hold on every supported Node.js line, run on each line other
// than the one running this script (the README's test command runs everything on Node 24). The lines are
// the client's engines range (packages/client/package.json), the one place they are listed; each comes from
// the npm registry (`npx -p node@<major>`), and each gets one line naming it and its result.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { withoutNpxOptions } from '../packages/test-support/dist/index.js';

const client = JSON.parse(readFileSync(new URL('../packages/client/package.json', import.meta.url), 'utf8'));
const majors = [...client.engines.node.matchAll(/\^(\d+)\./g)].map((m) => m[1]);
const current = process.versions.node.split('.')[0];
const suites = [
  ['the client', 'pnpm --filter @animal-store/client test'],
  ['the contract tests', 'pnpm --filter @animal-store/contract-tests test'],
  [
    'the server on SQLite',
    // Its folders that exercise Node itself (the HTTP server, signals, workers, the SQLite addon, tracing's
    // instrumentation), named as filters: vitest's --exclude does not reach a project's own list, and ran
    // them all. Left out: own-engines/ (Prometheus and the 1.1.0 release run on their own Node) and
    // every-topology/ (the limits and the admin API across instances: the algorithm's work, which
    // src/limits/ covers on every line; 45 s a line). The console's suites (apps/console) are the browser's
    // work, not Node's: on Node 24 only.
    'pnpm --filter @animal-store/server exec vitest run --project unit --project sqlite src/ test/every-engine/ test/sqlite-only/ test/engine-faults/',
  ],
];

// This script runs under `npx -p node@24 -p pnpm@10 -c '…'` (.ci/run): the npx it starts gets the
// environment without that npx's own options (withoutNpxOptions, from the built test-support package:
// `pnpm test:runtimes` builds the tree first).
const env = withoutNpxOptions();

// The lines run side by side (one after the other they were the longest part of .ci/run's tail, about 4.5
// minutes each), each one's output kept and printed whole when it ends, so that the lines do not interleave.
const runLine = (major) =>
  new Promise((resolve) => {
    const started = performance.now();
    const script = ['node --version', ...suites.map(([, command]) => command)].join(' && ');
    const run = spawn('npx', ['-y', '-p', `node@${major}`, '-p', 'pnpm@10', '-c', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    });
    const output = [];
    run.stdout.on('data', (chunk) => output.push(chunk));
    run.stderr.on('data', (chunk) => output.push(chunk));
    run.on('close', (status) => {
      const minutes = ((performance.now() - started) / 60_000).toFixed(1);
      process.stdout.write(
        `\n=== Node ${major}: ${suites.map(([name]) => name).join(', ')} (${minutes} min) ===\n`,
      );
      process.stdout.write(Buffer.concat(output));
      const version = spawnSync('npx', ['-y', '-p', `node@${major}`, '-c', 'node --version'], {
        encoding: 'utf8',
        env,
      });
      resolve({ major, version: version.stdout.trim(), passed: status === 0 });
    });
  });

const results = await Promise.all(majors.filter((m) => m !== current).map(runLine));
for (const { major, version, passed } of results) {
  process.stdout.write(
    `Node ${major} (${version}): ${passed ? 'passed' : 'FAILED'}: ${suites.map(([n]) => n).join(', ')}\n`,
  );
}
process.exit(results.every((r) => r.passed) ? 0 : 1);
