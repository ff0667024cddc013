// `pnpm spec:diff [--base <git-ref>]`: a review of what the working tree's contract changes against the
// contract at <ref> (default: main), by `redocly diff` (rules: redocly-diff.yaml). Every change is rated
// major (breaking for clients), minor or patch. Exits 1 on a breaking change unless a major changeset is
// pending. --base-file/--revision-file compare two files instead (fixtures, CI artefacts).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleTo, option, pendingMajorChangesets, repoRoot, specDir, specRoot } from './shared.js';

const temp = mkdtempSync(join(tmpdir(), 'animal-store-diff-'));
try {
  let base = option('base-file');
  let revision = option('revision-file');
  if (!base) {
    const ref = option('base', 'main') as string;
    const checkout = join(temp, 'base');
    mkdirSync(checkout);
    // The spec sources as they are at <ref>, bundled like the working tree's.
    const archive = execFileSync('git', ['archive', ref, 'spec/openapi'], { cwd: repoRoot });
    execFileSync('tar', ['-x', '-C', checkout], { input: archive });
    base = join(temp, `base-${ref.replace(/[^\w.-]/g, '_')}.json`);
    bundleTo(join(checkout, 'spec/openapi/openapi.yaml'), base);
  }
  if (!revision) {
    revision = join(temp, 'working-tree.json');
    bundleTo(specRoot, revision);
  }
  const diff = (format: string) =>
    spawnSync(
      'redocly',
      [
        'diff',
        base,
        revision,
        '--config',
        join(specDir, 'redocly-diff.yaml'),
        '--format',
        format,
        '--fail-on',
        'none',
      ],
      { encoding: 'utf8' },
    );
  const report = JSON.parse(diff('json').stdout) as {
    summary: { major: number; minor: number; patch: number };
  };
  const { major, minor, patch } = report.summary;
  process.stdout.write(
    major + minor + patch === 0 ? 'No changes to the contract.\n' : diff('markdown').stdout,
  );
  if (major > 0) {
    const pending = await pendingMajorChangesets(option('root', repoRoot));
    if (pending.length > 0) {
      const files = pending.map((c) => `.changeset/${c.id}.md`).join(', ');
      process.stdout.write(
        `\n${major} breaking change(s), allowed by the pending major changeset ${files}.\n`,
      );
    } else {
      process.stdout.write(
        `\n${major} breaking change(s) for clients. Avoid them, or record a major release: pnpm changeset (major for @animal-store/spec).\n`,
      );
      process.exitCode = 1;
    }
  }
} finally {
  rmSync(temp, { recursive: true, force: true });
}
