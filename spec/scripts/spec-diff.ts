// `pnpm spec:diff [--base <git-ref>]`: a review of what the working tree's contract changes against the
// contract at <ref> (default: main), by `redocly diff` (rules: redocly-diff.yaml). Every change is rated
// major (breaking for clients), minor or patch. Exits 1 on a breaking change unless a major changeset is
// pending. --base-file/--revision-file compare two files instead (fixtures, CI artefacts).
// One reclassification is ours: values added to an enum the contract marks `x-open-enum: true` (its
// description promises clients that new values may come in a minor version) are minor, not major.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { locate } from './locate.js';
import { bundleTo, pendingMajorChangesets, repoRoot, specDir, specRoot } from './shared.js';

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    'base-file': { type: 'string' },
    'revision-file': { type: 'string' },
    root: { type: 'string', default: repoRoot },
  },
});
const git = (...command: string[]) =>
  execFileSync('git', command, { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
const exists = (ref: string) => {
  try {
    git('rev-parse', '--verify', '--quiet', `${ref}^{commit}`);
    return true;
  } catch {
    return false;
  }
};
/** The ref to compare with: --base, else main, else origin/main (a clone in CI may have no local main). */
function baseRef(): string {
  const candidates = args.base ? [args.base] : ['main', 'origin/main'];
  const found = candidates.find(exists);
  if (!found) {
    process.stderr.write(`spec:diff: no git ref ${candidates.join(' or ')}; pass --base <ref>.\n`);
    process.exit(2);
  }
  return found;
}

const temp = mkdtempSync(join(tmpdir(), 'animal-store-diff-'));
try {
  let base = args['base-file'];
  let revision = args['revision-file'];
  if (!base) {
    const ref = baseRef();
    const checkout = join(temp, 'base');
    // The spec sources as they are at <ref> (read with git itself, no archive tool), bundled like the
    // working tree's.
    for (const file of git('ls-tree', '-r', '--name-only', ref, '--', 'spec/openapi')
      .split('\n')
      .filter(Boolean)) {
      mkdirSync(dirname(join(checkout, file)), { recursive: true });
      writeFileSync(join(checkout, file), execFileSync('git', ['show', `${ref}:${file}`], { cwd: repoRoot }));
    }
    base = join(temp, `base-${ref.replace(/[^\w.-]/g, '_')}.json`);
    bundleTo(join(checkout, 'spec/openapi/openapi.yaml'), base);
  }
  if (!revision) {
    revision = join(temp, 'working-tree.json');
    bundleTo(specRoot, revision);
  }
  const diff = (format: 'json') =>
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
  const report = JSON.parse(diff('json').stdout) as { changes: Change[] };
  const revised = JSON.parse(readFileSync(revision, 'utf8')) as unknown;
  const changes = report.changes.map((change) => reclassify(change, revised));
  const count = (impact: Impact) => changes.filter((c) => c.impact === impact).length;
  const [major, minor, patch] = [count('major'), count('minor'), count('patch')];
  process.stdout.write(major + minor + patch === 0 ? 'No changes to the contract.\n' : markdown(changes));
  if (major > 0) {
    const pending = await pendingMajorChangesets(args.root);
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

type Impact = 'major' | 'minor' | 'patch';
type Verdict = { ruleId: string; impact: Impact; message: string; location?: { pointer: string } };
type Change = { path: string; kind: string; impact: Impact; property?: string; verdicts?: Verdict[] };

/** The value at a JSON pointer (`#/a/b~1c`), or undefined. */
function at(document: unknown, pointer: string): unknown {
  return pointer
    .replace(/^#\/?/, '')
    .split('/')
    .filter(Boolean)
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], document);
}

function reclassify(change: Change, revised: unknown): Change {
  const verdicts = (change.verdicts ?? []).map((v) => {
    const schema = v.location && at(revised, v.location.pointer.replace(/\/enum$/, ''));
    const open = (schema as { 'x-open-enum'?: boolean } | undefined)?.['x-open-enum'] === true;
    return v.ruleId === 'enum-values-added' && open
      ? { ...v, impact: 'minor' as const, message: `${v.message} (an open enum: minor)` }
      : v;
  });
  const rank = { patch: 0, minor: 1, major: 2 };
  const impact = verdicts.length
    ? verdicts.reduce<Impact>((worst, v) => (rank[v.impact] > rank[worst] ? v.impact : worst), 'patch')
    : change.impact;
  return { ...change, verdicts, impact };
}

function markdown(changes: Change[]): string {
  const icon = { major: '🔴 major', minor: '🟢 minor', patch: '⚪ patch' };
  const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const rows = changes.map((c) => {
    const pointer = `\`${c.path}${c.property ? ` · ${c.property}` : ''}\``;
    // Messages quote names in backticks; a table cell shows them as they are.
    const details = (c.verdicts ?? []).map((v) => `${v.message} (${v.ruleId})`).join('<br>');
    const where =
      locate(c.property ? `${c.path}/${c.property}` : c.path) ?? (c.kind === 'removed' ? 'removed' : '—');
    return `| ${icon[c.impact]} | ${c.kind} | ${cell(pointer)} | ${where} | ${cell(details)} |`;
  });
  const counts = (['major', 'minor', 'patch'] as const).map(
    (i) => `**${changes.filter((c) => c.impact === i).length}** ${i}`,
  );
  return [
    '## API diff',
    '',
    counts.join(' · '),
    '',
    '| Impact | Change | Pointer | Location | Details |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}
