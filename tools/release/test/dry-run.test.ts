// `pnpm release --dry-run`: builds, packs each published package and publishes nothing (offline).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

describe('pnpm release --dry-run', () => {
  it('lists the tarballs of the fixed group at one version, and publishes nothing', async () => {
    const { stdout } = await promisify(execFile)('pnpm', ['release', '--dry-run', '--skip-tests'], {
      cwd: root,
      maxBuffer: 16 * 1024 * 1024,
    });
    const tarballs = [...stdout.matchAll(/📦 {2}(@animal-store\/[a-z-]+)@(\S+)/g)].map((m) => [m[1], m[2]]);
    expect(tarballs.map(([name]) => name).sort()).toEqual([
      '@animal-store/client',
      '@animal-store/server',
      '@animal-store/spec',
    ]);
    expect(new Set(tarballs.map(([, version]) => version)).size).toBe(1);
    expect(stdout).toContain('dist/docs.html');
    expect(stdout).toContain('CHANGELOG.md');
    expect(stdout).toContain('Dry run: nothing was published.');
  }, 300_000);
});
