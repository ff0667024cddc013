// Helpers shared by the spec scripts: bundling with Redocly, and reading pending changesets.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import readChangesets from '@changesets/read';

export const specDir = fileURLToPath(new URL('..', import.meta.url));
export const repoRoot = join(specDir, '..');
export const specRoot = join(specDir, 'openapi/openapi.yaml');
export const adminSpecRoot = join(specDir, 'admin/openapi.yaml');
export const specPackage = '@animal-store/spec';

/** Bundles a multi-file description into one JSON file (Redocly names each referenced file as a component). */
export function bundleTo(root: string, output: string): void {
  execFileSync('redocly', ['bundle', root, '-o', output], { stdio: 'ignore' });
}

export function bundleObject<T = Record<string, unknown>>(root: string): T {
  const temp = mkdtempSync(join(tmpdir(), 'animal-store-spec-'));
  try {
    bundleTo(root, join(temp, 'openapi.json'));
    return JSON.parse(readFileSync(join(temp, 'openapi.json'), 'utf8')) as T;
  } finally {
    rmSync(temp, { recursive: true });
  }
}

/** A JSON or already-bundled file as is; a YAML root gets bundled first. */
export const loadSpec = <T>(path: string): T =>
  path.endsWith('.json') ? (JSON.parse(readFileSync(path, 'utf8')) as T) : bundleObject<T>(path);

/** Pending changesets that bump the spec package (and so, the fixed group) by a major version. */
export async function pendingMajorChangesets(root = repoRoot) {
  const changesets = await readChangesets(root);
  return changesets.filter((c) => c.releases.some((r) => r.name === specPackage && r.type === 'major'));
}
