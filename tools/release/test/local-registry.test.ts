// `pnpm --filter @animal-store/release-tools local-registry`: the registry a release rehearsal by hand
// publishes to (docs/releasing.md), started as a person starts it, asked, and stopped with Ctrl-C.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../src/local-registry.ts', import.meta.url));

describe('the local registry', () => {
  it('prints the .npmrc lines of a registry that answers, serves the scope, and Ctrl-C stops it and deletes its storage', async () => {
    const registry = spawn('tsx', [script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let printed = '';
    registry.stdout.on('data', (chunk) => {
      printed += chunk;
    });
    const exited = new Promise<number | null>((resolve) => registry.on('exit', resolve));
    await expect.poll(() => printed, { timeout: 30_000 }).toMatch(/_authToken=/);
    const url = /runs at (\S+) /.exec(printed)?.[1] as string;
    expect(printed).toContain(`@animal-store:registry=${url}\n`);
    expect((await fetch(`${url}-/ping`)).status).toBe(200);
    // The scope is its own: a package nobody published here is not looked for elsewhere.
    expect((await fetch(`${url}@animal-store%2fserver`)).status).toBe(404);
    const storage = /Its storage: (\S+)/.exec(printed)?.[1] as string;
    expect(existsSync(storage)).toBe(true);
    registry.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(await fetch(`${url}-/ping`).catch(() => 'gone')).toBe('gone');
    expect(existsSync(storage)).toBe(false);
  });

  it('--help is the usage, exit 0; an unknown option one line and the usage, exit 2', async () => {
    const run = (arg: string) =>
      new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn('tsx', [script, arg]);
        let output = '';
        child.stdout.on('data', (c) => (output += c));
        child.stderr.on('data', (c) => (output += c));
        child.on('exit', (code) => resolve({ code, output }));
      });
    expect(await run('--help')).toEqual({ code: 0, output: expect.stringMatching(/^Usage: pnpm/) });
    const unknown = await run('--publish');
    expect(unknown.code).toBe(2);
    expect(unknown.output).toMatch(/^local-registry: Unknown option '--publish'/);
    expect(unknown.output).not.toMatch(/\n\s+at /);
  });
});
