// The changeset guard (`pnpm guards`, in `pnpm lint:root` and CI): what a change ships must come with a
// changeset of its own that names each package it ships in, or the next CHANGELOG would not mention it
// (2.0.0 shipped without Sentinel, Cluster and the lease change in any note; later, another change's pending
// changeset let a contract change through unnamed).
//
// "The change" is found by change.ts: a pull request against its base (GITHUB_BASE_REF, or `--base <ref>`),
// a branch against its merge base with main, or on main what is not committed yet; a checkout without the
// history to tell refuses (exit 2). For each package whose shipped files the change touches, a changeset
// added by the change must name that package. An empty changeset (no package named) declares that users see
// nothing of the change: it covers the sources' files, never a contract's (a contract change is what users
// see). A change of a contract must also carry the bump `pnpm spec:diff` rates it (major for a breaking one,
// minor for an additive one), judged on the changesets the change adds.
//
// Since the last release (the commit that last set the server's version: docs/releasing.md), a change of
// the contracts must be named by some pending changeset of the spec package: empty ones release nothing,
// and the contract would change under the same info.version.
//
// Shipped: the server's sources and bin, the console (the server ships it), the contracts, the client's
// sources, the container image (Containerfile, .containerignore) and the alert rules (deploy/), and each
// package's runtime dependencies; tests are not. Written by hand: docs/decisions.md#changeset-guard.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import parseChangeset from '@changesets/parse';
import { changeOrExit } from './change.js';
import { addedChangesetFiles } from './repo.js';

const { values: args } = parseArgs({ options: { base: { type: 'string' } } });
const root = process.cwd();
const out = (...command: string[]) => {
  const result = spawnSync('git', command, { cwd: root, encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : undefined;
};
const lines = (text: string | undefined) => text?.split('\n').filter(Boolean) ?? [];

type Package = { name: string; paths: string[]; manifests: string[]; contracts?: boolean };
/** Each released package, the paths that ship in it, and the manifests whose dependencies ship with it. */
const packages: Package[] = [
  {
    name: '@animal-store/server',
    paths: [
      ...['apps/server/src', 'apps/server/bin', 'apps/console/src', 'apps/console/index.html'],
      ...['Containerfile', '.containerignore', 'deploy'],
    ],
    manifests: ['apps/server/package.json', 'apps/console/package.json'],
  },
  {
    name: '@animal-store/spec',
    paths: ['spec/openapi', 'spec/admin'],
    manifests: ['spec/package.json'],
    contracts: true,
  },
  {
    name: '@animal-store/client',
    paths: ['packages/client/src'],
    manifests: ['packages/client/package.json'],
  },
];
const dependencyFields = ['dependencies', 'peerDependencies', 'optionalDependencies'];
const shipped = (file: string) => !/\.test(-d)?\.tsx?$|\/generated\//.test(file);

/** The files under `paths` changed from `base` to the working tree, new untracked ones included. */
function changedFiles(base: string, paths: string[]): string[] {
  const tracked = lines(out('diff', '--name-only', base, '--', ...paths));
  const untracked = lines(out('ls-files', '--others', '--exclude-standard', '--', ...paths));
  return [...new Set([...tracked, ...untracked])].filter(shipped);
}

/** Whether a manifest's runtime dependencies differ between `base` and the working tree. */
function dependenciesChanged(base: string, manifest: string): boolean {
  const fields = (text: string) => {
    try {
      const json = JSON.parse(text) as Record<string, unknown>;
      return JSON.stringify(dependencyFields.map((field) => json[field] ?? {}));
    } catch {
      return '';
    }
  };
  let now = '{}';
  try {
    now = readFileSync(join(root, manifest), 'utf8');
  } catch {}
  return fields(out('show', `${base}:${manifest}`) ?? '{}') !== fields(now);
}

/** What each package ships that changed since `base`: its files, and its manifests whose dependencies changed. */
const changesOf = (base: string) =>
  packages.map((pkg) => ({
    pkg,
    files: [...changedFiles(base, pkg.paths), ...pkg.manifests.filter((m) => dependenciesChanged(base, m))],
  }));

/** The changesets added since `base` (committed or not), each with the packages it names and their bumps. */
function changesetsSince(base: string) {
  return addedChangesetFiles(root, base).flatMap((file) => {
    try {
      return [{ file, ...parseChangeset(readFileSync(join(root, file), 'utf8')) }];
    } catch {
      return []; // removed since (a release consumed it)
    }
  });
}
type Changesets = ReturnType<typeof changesetsSince>;
/** Whether one of `changesets` releases `name` (an empty changeset names no package). */
const names = (changesets: Changesets, name: string) =>
  changesets.some((c) => c.releases.some((r) => r.name === name && r.type !== 'none'));

const list = (files: string[]) =>
  files
    .slice(0, 10)
    .map((file) => `  ${file}\n`)
    .join('') + (files.length > 10 ? `  … and ${files.length - 10} more\n` : '');
const failures: string[] = [];
const change = changeOrExit('changeset guard', root, args.base);
const { base, label } = change;

// 1. The change: each package it ships in is named by a changeset it adds (an empty one: sources only).
const added = changesetsSince(base);
const declaredEmpty = added.some((c) => c.releases.length === 0);
for (const { pkg, files } of changesOf(base)) {
  if (files.length === 0 || names(added, pkg.name) || (declaredEmpty && !pkg.contracts)) continue;
  const empty = declaredEmpty ? ' (an empty changeset covers no contract change: users see it)' : '';
  failures.push(
    `${label} ships ${files.length} changed file(s) of ${pkg.name} and adds no changeset naming it${empty} ` +
      `(pnpm changeset, pick ${pkg.name}; an empty changeset if users see nothing of it):\n${list(files)}`,
  );
}

// 2. The bump: a contract change carries the level spec:diff rates it, judged on the changesets this change adds.
if (changedFiles(base, ['spec/openapi', 'spec/admin']).length > 0) {
  const diff = spawnSync(
    'pnpm',
    ['--silent', '--filter', '@animal-store/release-tools', 'spec:diff', '--base', base, '--since', base],
    // Its review is the guard's to judge, not a page of the job's summary (the spec review writes that one).
    { cwd: root, encoding: 'utf8', env: { ...process.env, GITHUB_STEP_SUMMARY: '' } },
  );
  if (diff.error) {
    failures.push(
      `${label} changes a contract, and \`pnpm spec:diff\` could not run to rate it (${diff.error.message})\n`,
    );
  } else if (diff.status !== 0) {
    const said = lines(`${diff.stdout}\n${diff.stderr}`);
    const verdict =
      said.find((line) => line.includes('changeset of @animal-store/spec')) ??
      `\`pnpm spec:diff --base ${base}\` failed: ${said.find((line) => /error/i.test(line)) ?? said.at(-1)}`;
    failures.push(`${label} changes a contract: ${verdict}\n`);
  }
}

// 3. The release: a contract changed since it is named by a pending changeset (the version it is published under).
if (change.release) {
  const pending = changesetsSince(change.release);
  for (const { pkg, files } of changesOf(change.release)) {
    if (files.length === 0 || !pkg.contracts || names(pending, pkg.name)) continue;
    failures.push(
      `${files.length} file(s) of ${pkg.name} changed since the release commit ${change.release.slice(0, 7)}, and no ` +
        `pending changeset names ${pkg.name} (empty ones release nothing; docs/releasing.md, "The flow"):\n${list(files)}`,
    );
  }
}

if (failures.length > 0) {
  process.stderr.write(failures.map((failure) => `changeset guard: ${failure}`).join(''));
  process.exit(1);
}
process.stdout.write(`changeset guard: ${label}: every package it ships in is named by its changesets.\n`);
