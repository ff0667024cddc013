// The propagation bound has one source (bounds.ts): the caches and the meter use it, and the prose that must
// repeat it (the admin contract, the README, the docs) says the same number, or this fails.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { propagationMs, propagationText } from './bounds.js';
import { banCacheMs } from './limits/ban-cache.js';
import { shortestWaitMs } from './limits/bans.js';
import { instanceLiveMs, instancesCountMs } from './limits/insured.js';
import { holdMs, leaseCoverMs, leaseMs, maxLease } from './limits/lease-terms.js';
import { reportMs } from './limits/policy.js';
import { keyCacheMs } from './store/key-cache.js';
import { usageFlushMs } from './usage/meter.js';

const read = (path: string) =>
  readFileSync(fileURLToPath(new URL(`../../../${path}`, import.meta.url)), 'utf8');

describe('the propagation bound', () => {
  it('is the key cache, the ban cache, the usage writes and the admitted reports alike', () => {
    expect([keyCacheMs, banCacheMs, usageFlushMs, reportMs]).toEqual(Array(4).fill(propagationMs));
  });

  it.each([
    'spec/admin/openapi.yaml',
    'spec/admin/paths/keys_{keyId}.yaml',
    'spec/admin/paths/keys_{keyId}_revoke.yaml',
    'spec/admin/paths/keys_{keyId}_rotate.yaml',
    'spec/admin/paths/keys_{keyId}_unban.yaml',
    'spec/admin/components/schemas/Window.yaml',
  ])('%s promises it as bounds.ts says, and no other bound', (file) => {
    const text = read(file);
    expect(text).toContain(`within ${propagationText}`);
    expect(text.match(/within \d+ seconds/g)?.every((s) => s === `within ${propagationText}`)).toBe(true);
  });

  it.each(['README.md', 'docs/keys.md', 'docs/scaling-out.md'])('%s says the same number', (file) => {
    const promises = read(file).match(/within \d+ (?:s|seconds)\b/g) ?? [];
    expect(promises.length).toBeGreaterThan(0);
    for (const promise of promises)
      expect(promise).toMatch(new RegExp(`within ${propagationMs / 1000} (s|seconds)$`));
  });
});

describe('the lease and outage bounds', () => {
  const page = read('docs/rate-limits.md');
  const number = (n: number) => n.toLocaleString('en-US');

  it.each([
    ['a lease covers', `covers ${leaseCoverMs} ms of the process's own traffic`],
    ['a lease holds at most', `never more than ${number(maxLease)} points`],
    ['a lease lasts', `**Length: ${leaseMs} ms.**`],
    ['the store holds a window for', `held_ for ${number(holdMs)} ms from each grant`],
    [
      'a request waits for held points at most',
      `waits until they would (at most ${holdMs / 1000} s, the hold)`,
    ],
    ['a refusal still held at the last look asks', `is answered \`Retry-After: ${shortestWaitMs / 1000}\``],
    [
      'the instances are counted every',
      `counted every ${instancesCountMs / 1000} s while Redis answers; a crashed instance\nstops counting within ${instanceLiveMs / 1000} s`,
    ],
  ])('docs/rate-limits.md states what the code does: %s', (_, sentence) => {
    expect(page).toContain(sentence);
  });

  it.each([
    'README.md',
    'docs/keys.md',
    'docs/scaling-out.md',
    'docs/failures.md',
    'docs/observability.md',
    'docs/running.md',
  ])('%s states no lease or outage bound of its own (they live in docs/rate-limits.md)', (file) => {
    const text = read(file);
    expect(text).not.toMatch(/at most 100\b|N times a key's quota|up to N/);
    for (const ms of text.match(/\b\d+ ms\b/g) ?? []) {
      // any lease figure a page repeats is the code's
      if (/lease|give/.test(text.slice(text.indexOf(ms) - 80, text.indexOf(ms) + 10))) {
        expect([`${leaseMs} ms`, `${leaseCoverMs} ms`]).toContain(ms);
      }
    }
    expect(text).toContain('rate-limits.md');
  });
});
