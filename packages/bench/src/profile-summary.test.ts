// The profile summary, on a real V8 profile of a real process.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ourLayers, summarise } from './profile-summary.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it('names the function that kept the process busy, with its share, and leaves idle time out', () => {
  const dir = mkdtempSync(join(tmpdir(), 'profile-summary-'));
  dirs.push(dir);
  // Busy in one named function for a fixed amount of work (about 300 ms here), then idle for 300 ms. A
  // count, not a time: on a loaded machine a clock-bound loop got less of the CPU than the process's own
  // start-up (CI: 44 % against 50).
  const script =
    'function spinTheWheel(){let x=0;for(let i=0;i<3e7;i++)x+=Math.sqrt(x+1);return x}spinTheWheel();setTimeout(()=>{},300)';
  const run = spawnSync(process.execPath, ['--cpu-prof', '--cpu-prof-dir', dir, '-e', script]);
  expect(run.status).toBe(0);
  const [profile] = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  const text = readFileSync(summarise(join(dir, profile as string), '/').file, 'utf8');
  expect(text).not.toContain('(idle)');
  const line = text.split('\n').find((l) => l.includes('spinTheWheel')) ?? '';
  expect(Number.parseFloat(line)).toBeGreaterThan(50); // most of the busy time, whatever the machine
}, 60_000); // 0.6 s of work; several seconds of start-up on a machine running two suites at once

it("gives each sample to the innermost of the server's layers on its stack, and counts the start-up apart", () => {
  const dir = mkdtempSync(join(tmpdir(), 'profile-summary-'));
  dirs.push(dir);
  const dist = 'file:///repo/apps/server/dist';
  const frame = (id: number, url: string, functionName: string, children: number[] = []) => ({
    id,
    callFrame: { url, functionName, lineNumber: 0 },
    children,
  });
  // A middleware chain: the chain calls the limiter, which (through next) calls the route, which queries
  // the store; a sample in the store's addon is the store's, one in the limiter's own code the limiter's,
  // one in an unnamed builtin under the chain the chain's; and a module being loaded is the start-up.
  const profile = {
    nodes: [
      frame(1, '', '(root)', [2, 7, 8]),
      frame(2, `${dist}/http/chain.js`, 'step', [3, 6]),
      frame(3, `${dist}/api/rate-limit.js`, 'rateLimit', [4]),
      frame(4, `${dist}/api/pets/routes.js`, '', [5]),
      frame(
        5,
        'file:///repo/node_modules/.pnpm/better-sqlite3@13.0.0/node_modules/better-sqlite3/lib/methods/wrappers.js',
        'all',
      ),
      frame(6, '', 'stringify'),
      frame(7, 'node:internal/modules/cjs/loader', 'wrapSafe'),
      frame(8, '', '(idle)'),
    ],
    samples: [5, 5, 5, 3, 6, 7, 7, 8, 8, 8],
    timeDeltas: [100, 100, 100, 100, 100, 100, 100, 100, 100, 100],
  };
  const path = join(dir, 'server.cpuprofile');
  writeFileSync(path, JSON.stringify(profile));
  const summary = summarise(path, '/repo/');
  const text = readFileSync(summary.file, 'utf8');
  const layers = text.split('by layer of the server')[1] ?? '';
  expect(layers).toContain('start-up apart, 0.0 s');
  expect(layers.split('\n').slice(1).filter(Boolean)).toEqual([
    ' 60.0 %  the store (queries, rows)',
    ' 20.0 %  the rate limit (policy, leases, bans, headers)',
    ' 20.0 %  our other middleware and the chain',
  ]);
  // The same layers in µs of busy time, for the bench's budget per request.
  expect(Object.fromEntries(summary.layerUs ?? [])).toEqual({
    'the store (queries, rows)': 300,
    'the rate limit (policy, leases, bans, headers)': 100,
    'our other middleware and the chain': 100,
  });
});

it('prints no layers for a profile of another program', () => {
  const dir = mkdtempSync(join(tmpdir(), 'profile-summary-'));
  dirs.push(dir);
  const path = join(dir, 'other.cpuprofile');
  writeFileSync(
    path,
    JSON.stringify({
      nodes: [{ id: 1, callFrame: { url: 'file:///elsewhere/x.js', functionName: 'work', lineNumber: 0 } }],
      samples: [1, 1],
      timeDeltas: [100, 100],
    }),
  );
  const summary = summarise(path, '/');
  expect(readFileSync(summary.file, 'utf8')).not.toContain('by layer');
  expect(summary.layerUs).toBeUndefined();
});

it('holds our own six layers to the budget, and none of the work validated Express does too', () => {
  expect([...ourLayers].sort()).toEqual([
    'identifying the key (hash, cache)',
    'metrics',
    'our other middleware and the chain',
    'the cursor',
    'the rate limit (policy, leases, bans, headers)',
    'the request log (ours, pino)',
  ]);
});
