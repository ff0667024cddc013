// What the release tools know of the repository: where the contracts are, their bundles (also as they were
// at a git ref), the last release commit, and the pending changesets.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import readChangesets from '@changesets/read';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const specDir = join(repoRoot, 'spec');
export const specRoot = join(specDir, 'openapi/openapi.yaml');
export const adminSpecRoot = join(specDir, 'admin/openapi.yaml');
export const specPackage = '@animal-store/spec';

/** Bundles a multi-file description into one JSON file (Redocly names each referenced file as a component). */
export function bundleTo(root: string, output: string): void {
  execFileSync('redocly', ['bundle', root, '-o', output], { stdio: 'ignore' });
}

/**
 * The contracts' sources (spec/openapi, spec/admin) as they are at git `ref`, written under `dir` at their
 * paths in the repository (read with git itself, no archive tool); a source's root is then
 * join(dir, relative(repoRoot, root)).
 */
export function sourcesAt(ref: string, dir: string): void {
  const git = (...command: string[]) =>
    execFileSync('git', command, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'ignore'] });
  const files = git('ls-tree', '-r', '--name-only', ref, '--', 'spec/openapi', 'spec/admin').toString();
  for (const file of files.split('\n').filter(Boolean)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), git('show', `${ref}:${file}`));
  }
}

/** A JSON or already-bundled file as is; a YAML root gets bundled first. */
export function loadSpec<T>(path: string): T {
  if (path.endsWith('.json')) return JSON.parse(readFileSync(path, 'utf8')) as T;
  const temp = mkdtempSync(join(tmpdir(), 'animal-store-spec-'));
  try {
    bundleTo(path, join(temp, 'openapi.json'));
    return loadSpec<T>(join(temp, 'openapi.json'));
  } finally {
    rmSync(temp, { recursive: true });
  }
}

/**
 * Pending changesets that release the spec package (and so, the fixed group), with its bump; `since`: only
 * those added since that git ref (a branch's own, not another change's).
 */
export async function specChangesets(root = repoRoot, since?: string) {
  const added = since === undefined ? undefined : addedChangesets(root, since);
  const changesets = (await readChangesets(root)).filter((c) => !added || added.has(c.id));
  return changesets.flatMap((c) => {
    const bump = c.releases.find((r) => r.name === specPackage)?.type;
    return bump && bump !== 'none' ? [{ ...c, bump }] : [];
  });
}

/** The ids of the changesets added since git `ref`, committed or not (untracked files included). */
function addedChangesets(root: string, ref: string): Set<string> {
  return new Set(
    addedChangesetFiles(root, ref).map((file) => file.slice('.changeset/'.length, -'.md'.length)),
  );
}

/**
 * The changeset files (`.changeset/<id>.md`, not its README) added since git `ref`, committed or not
 * (untracked files included); none where git cannot tell (a repository without a commit yet).
 */
export function addedChangesetFiles(root: string, ref: string): string[] {
  const git = (...command: string[]) => {
    const result = spawnSync('git', command, { cwd: root, encoding: 'utf8' });
    return result.status === 0 ? result.stdout.split('\n') : [];
  };
  const files = [
    ...git('diff', '--name-only', '--diff-filter=A', ref, '--', '.changeset'),
    ...git('ls-files', '--others', '--exclude-standard', '--', '.changeset'),
  ];
  return [...new Set(files)].filter(
    (file) => /^\.changeset\/.+\.md$/.test(file) && file !== '.changeset/README.md',
  );
}

/** Pending changesets that bump the spec package (and so, the fixed group) by a major version. */
export async function pendingMajorChangesets(root = repoRoot) {
  return (await specChangesets(root)).filter((c) => c.bump === 'major');
}
