// The changeset guard (run by `pnpm lint:root`): what a change ships must come with a changeset of its own
// that names each package it ships in, or the next CHANGELOG would not mention it (2.0.0 shipped without
// Sentinel, Cluster and the lease change in any note; later, another change's pending changeset let a
// contract change through unnamed).
//
// "The change" is what this branch adds to the branch it will merge into (its merge base with main; or
// `--base <ref>`), or on main what is not committed yet. For each package whose shipped
// files the change touches, a changeset added by the change must name that package; an empty changeset
// (no package named) declares that the change touches nothing users see, and covers only that. A change
// of a contract must also carry the bump `pnpm spec:diff` rates it (major for a breaking one, minor for an
// additive one): the guard runs it against the same base.
//
// Since the last release (the commit that last set the server's version: docs/releasing.md), a change of
// the contracts must be named by some pending changeset of the spec package: empty ones release nothing,
// and the contract would change under the same info.version.
//
// Shipped: the server's sources and bin, the console (the server ships it), the contracts, the client's
// sources, the container image (Containerfile, .containerignore) and the alert rules (deploy/), and each
// package's runtime dependencies; tests are not. Outside a git checkout with that history (a tarball, a
// shallow clone) it says so and passes. Written by hand: docs/decisions.md#changeset-guard.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import parseChangeset from '@changesets/parse';

const { values: args } = parseArgs({ options: { base: { type: 'string' } } });
const root = process.cwd();
const git = (...command) => spawnSync('git', command, { cwd: root, encoding: 'utf8' });
const out = (...command) => {
  const result = git(...command);
  return result.status === 0 ? result.stdout.trim() : undefined;
};

/** Each released package, the paths that ship in it, and the manifest whose dependencies ship with it. */
const packages = [
  {
    name: '@animal-store/server',
    paths: ['apps/server/src', 'apps/server/bin', 'apps/console/src', 'apps/console/index.html'],
    image: ['Containerfile', '.containerignore', 'deploy'],
    manifests: ['apps/server/package.json', 'apps/console/package.json'],
  },
  { name: '@animal-store/spec', paths: ['spec/openapi', 'spec/admin'], manifests: ['spec/package.json'] },
  {
    name: '@animal-store/client',
    paths: ['packages/client/src'],
    manifests: ['packages/client/package.json'],
  },
];
const dependencyFields = ['dependencies', 'peerDependencies', 'optionalDependencies'];
const shipped = (file) => !/\.test\.ts$|\/generated\//.test(file);

const release = out('log', '-1', '--format=%H', '-G"version":', '--', 'apps/server/package.json');
if (!release) {
  process.stdout.write('changeset guard: no release commit in this checkout’s history; not checked\n');
  process.exit(0);
}

/** The files under `paths` changed from `base` to the working tree, new untracked ones included. */
function changedFiles(base, paths) {
  const tracked = out('diff', '--name-only', base, '--', ...paths)?.split('\n') ?? [];
  const untracked = out('ls-files', '--others', '--exclude-standard', '--', ...paths)?.split('\n') ?? [];
  return [...new Set([...tracked, ...untracked])].filter((file) => file && shipped(file));
}

/** Whether a manifest's runtime dependencies differ between `base` and the working tree. */
function dependenciesChanged(base, manifest) {
  const fields = (text) => {
    try {
      const json = JSON.parse(text);
      return JSON.stringify(dependencyFields.map((field) => json[field] ?? {}));
    } catch {
      return '';
    }
  };
  const before = out('show', `${base}:${manifest}`) ?? '{}';
  let now = '{}';
  try {
    now = readFileSync(join(root, manifest), 'utf8');
  } catch {}
  return fields(before) !== fields(now);
}

/** What each package ships that changed since `base`: its files, and its manifests whose dependencies changed. */
const changesOf = (base) =>
  packages.map((pkg) => ({
    pkg,
    files: [
      ...changedFiles(base, [...pkg.paths, ...(pkg.image ?? [])]),
      ...pkg.manifests.filter((manifest) => dependenciesChanged(base, manifest)),
    ],
  }));

/** The changesets added since `base` (committed or not), each with the packages it names and their bumps. */
function changesetsSince(base) {
  const added = [
    ...(out('diff', '--name-only', '--diff-filter=A', base, '--', '.changeset')?.split('\n') ?? []),
    ...(out('ls-files', '--others', '--exclude-standard', '--', '.changeset')?.split('\n') ?? []),
  ].filter((file) => /^\.changeset\/.+\.md$/.test(file) && !file.endsWith('/README.md'));
  return [...new Set(added)].flatMap((file) => {
    try {
      return [{ file, ...parseChangeset(readFileSync(join(root, file), 'utf8')) }];
    } catch {
      return []; // removed since (a release consumed it)
    }
  });
}

const list = (files) =>
  files
    .slice(0, 10)
    .map((file) => `  ${file}\n`)
    .join('') + (files.length > 10 ? `  … and ${files.length - 10} more\n` : '');
const failures = [];

// 1. The change: this branch against its base, or on main what is not committed.
const branch = out('rev-parse', '--abbrev-ref', 'HEAD');
const mainRef = ['main', 'origin/main'].find((ref) => out('rev-parse', '--verify', '--quiet', ref));
const requested = args.base;
let base = requested;
if (!base && branch !== 'main' && branch !== 'HEAD' && mainRef) base = out('merge-base', mainRef, 'HEAD');
if (!base) base = 'HEAD';
const added = changesetsSince(base);
const declaredEmpty = added.filter((c) => c.releases.length === 0);
const label = base === 'HEAD' ? 'the uncommitted change' : `this change (since ${base.slice(0, 7)})`;
for (const { pkg, files } of changesOf(base)) {
  if (files.length === 0) continue;
  const named = added.some((c) => c.releases.some((r) => r.name === pkg.name && r.type !== 'none'));
  if (named || declaredEmpty.length > 0) continue;
  failures.push(
    `${label} ships ${files.length} changed file(s) of ${pkg.name} and adds no changeset naming it ` +
      `(pnpm changeset, pick ${pkg.name}; an empty changeset if users see nothing of it):\n${list(files)}`,
  );
}

// 2. The bump: a contract change carries the level spec:diff rates it, judged on the changesets this change adds.
const contracts = changedFiles(base, ['spec/openapi', 'spec/admin']);
if (contracts.length > 0) {
  const diff = spawnSync(
    'pnpm',
    ['--silent', '--filter', '@animal-store/release-tools', 'spec:diff', '--base', base, '--since', base],
    { cwd: root, encoding: 'utf8' },
  );
  if (diff.error) {
    failures.push(
      `${label} changes a contract, and \`pnpm spec:diff\` could not run to rate it (${diff.error.message})\n`,
    );
  } else if (diff.status !== 0) {
    const lines = `${diff.stdout}\n${diff.stderr}`.split('\n').filter(Boolean);
    const verdict =
      lines.find((line) => line.includes('changeset of @animal-store/spec')) ??
      `\`pnpm spec:diff --base ${base}\` failed: ${lines.find((line) => /error/i.test(line)) ?? lines.at(-1)}`;
    failures.push(`${label} changes a contract: ${verdict}\n`);
  }
}

// 3. The release: a contract changed since it is named by a pending changeset (the version it is published under).
const pending = changesetsSince(release);
for (const { pkg, files } of changesOf(release)) {
  if (files.length === 0 || pkg.name !== '@animal-store/spec') continue;
  if (pending.some((c) => c.releases.some((r) => r.name === pkg.name && r.type !== 'none'))) continue;
  failures.push(
    `${files.length} file(s) of ${pkg.name} changed since the release commit ${release.slice(0, 7)}, and no ` +
      `pending changeset names ${pkg.name} (empty ones release nothing; docs/releasing.md, "The flow"):\n${list(files)}`,
  );
}

if (failures.length > 0) {
  process.stderr.write(failures.map((failure) => `changeset guard: ${failure}`).join(''));
  process.exit(1);
}
