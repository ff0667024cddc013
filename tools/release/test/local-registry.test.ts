// `pnpm --filter @animal-store/release-tools local-registry`: the registry a release rehearsal by hand
// publishes to (docs/releasing.md), started as a person starts it, asked, and stopped with Ctrl-C.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../src/local-registry.ts', import.meta.url));

/**
 * The registry started as a person starts it (the package's script: node with tsx's loader, no tsx CLI in
 * between, whose relay of a signal gives the process 2 × 30 ms to say it got it, then kills it and exits
 * 130: a loaded machine missed that), once it has printed its .npmrc lines.
 */
async function started(...args: string[]) {
  const registry = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  registry.stdout.on('data', (chunk) => {
    printed += chunk;
  });
  const exited = new Promise<number | null>((resolve) => registry.on('exit', resolve));
  await expect.poll(() => printed, { timeout: 60_000 }).toMatch(/_authToken=/);
  return { registry, printed, exited, url: /runs at (\S+) /.exec(printed)?.[1] as string };
}

describe('the local registry', () => {
  it('prints the .npmrc lines of a registry that answers, serves the scope, and Ctrl-C stops it and deletes its storage', async () => {
    const { registry, printed, exited, url } = await started();
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

  it('--dir of a folder that does not exist yet makes it, and keeps it after Ctrl-C', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'registry-dir-'));
    const dir = join(parent, 'new', 'registry');
    try {
      const { registry, printed, exited, url } = await started('--dir', dir);
      expect(printed).toContain(`Its storage: ${dir}\n`);
      expect((await fetch(`${url}-/ping`)).status).toBe(200);
      registry.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(existsSync(join(dir, 'verdaccio.yaml'))).toBe(true);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
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

it("the repository's .npmrc, where the registry's lines and token go, is ignored by git", async () => {
  const root = fileURLToPath(new URL('../../../', import.meta.url));
  const ignored = spawn('git', ['check-ignore', '--quiet', '.npmrc'], { cwd: root });
  expect(await new Promise((resolve) => ignored.on('exit', resolve))).toBe(0);
});
