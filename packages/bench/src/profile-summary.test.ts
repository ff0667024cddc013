// The profile summary, on a real V8 profile of a real process.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { summarise } from './profile-summary.js';

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
  const text = readFileSync(summarise(join(dir, profile as string), '/'), 'utf8');
  expect(text).not.toContain('(idle)');
  const line = text.split('\n').find((l) => l.includes('spinTheWheel')) ?? '';
  expect(Number.parseFloat(line)).toBeGreaterThan(50); // most of the busy time, whatever the machine
}, 60_000); // 0.6 s of work; several seconds of start-up on a machine running two suites at once
