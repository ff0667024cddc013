// What every suite pays before its first test: the helpers' imports. playwright-core alone took a quarter to
// half a second of each file's import (vitest's import breakdown), for the few suites that drive a page.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** The packages a fresh Node process resolves while it imports `specifier` (a resolve hook records them). */
function resolvedBy(specifier: string): string[] {
  const hook = `
    import { registerHooks } from 'node:module';
    globalThis.resolved = [];
    registerHooks({ resolve(s, c, next) { const r = next(s, c); globalThis.resolved.push(r.url); return r; } });`;
  const script = `await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(globalThis.resolved));`;
  const output = execFileSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(hook)}`, '--input-type=module', '-e', script],
    { cwd: new URL('../..', import.meta.url), encoding: 'utf8' },
  );
  return JSON.parse(output) as string[];
}

describe("the test helpers' imports", () => {
  it('@animal-store/test-support loads playwright-core only when a suite launches Chromium', () => {
    const resolved = resolvedBy('@animal-store/test-support');
    expect(resolved.some((url) => url.includes('/test-support/dist/index.js'))).toBe(true);
    expect(resolved.filter((url) => url.includes('playwright'))).toEqual([]);
  });
});
