// `pnpm spec:diff [--base <git-ref>] [--since <git-ref>]`: a review of what the change (change.ts: a pull
// request against GITHUB_BASE_REF, a branch against main, or --base <ref>; their merge base with HEAD)
// makes of each contract (the public API and the admin API), by `redocly diff` (rules: redocly-diff.yaml).
// Every change is rated major (breaking for clients), minor (additive) or patch. Exits 1 unless a changeset
// of @animal-store/spec that the change adds (or with --since, that was added since that ref) carries that
// bump: a breaking change needs a major one, an additive change a minor or major one (the fixed group moves
// together); another change's pending changeset records nothing here. Exits 2 when the checkout cannot show
// the change. --base-file/--revision-file compare two files of one contract instead (fixtures, CI
// artefacts; --admin when they are the admin contract's), judged on the pending changesets of --root.
// With GITHUB_STEP_SUMMARY set (a GitHub job), the review is also written to the job's summary, where a
// fork's pull request, whose token cannot comment, shows it.
// Two reclassifications are ours: values added to an enum the contract marks `x-open-enum: true` (its
// description promises clients that new values may come in a minor version) are minor, not major; and a
// query parameter's `allowReserved` turned on (it accepts more, refuses nothing it took) is minor.
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { changeOrExit } from './change.js';
import { locate } from './locate.js';
import { adminSpecRoot, bundleTo, repoRoot, sourcesAt, specChangesets, specRoot } from './repo.js';

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    since: { type: 'string' },
    'base-file': { type: 'string' },
    'revision-file': { type: 'string' },
    admin: { type: 'boolean', default: false },
    root: { type: 'string', default: repoRoot },
  },
});
/** The two contracts: each is reviewed on its own, against its own sources (admin/ refers into openapi/). */
const contracts = [
  { title: 'The public API', root: specRoot },
  { title: 'The admin API', root: adminSpecRoot },
];

/** One contract's review: the Markdown of its changes and how many break clients. */
function review(
  base: string,
  revision: string,
  root: string,
): { text: string; major: number; minor: number } {
  const diff = spawnSync(
    'redocly',
    [
      'diff',
      base,
      revision,
      '--config',
      fileURLToPath(new URL('../redocly-diff.yaml', import.meta.url)),
      '--format',
      'json',
      '--fail-on',
      'none',
    ],
    { encoding: 'utf8' },
  );
  const report = JSON.parse(diff.stdout) as { changes: Change[] };
  const revised = JSON.parse(readFileSync(revision, 'utf8')) as unknown;
  const original = JSON.parse(readFileSync(base, 'utf8')) as unknown;
  const changes = report.changes
    .filter((change) => !bundlingArtefact(change, root))
    .map((change) => reclassify(change, revised));
  const count = (impact: Impact) => changes.filter((c) => c.impact === impact).length;
  const [major, minor, patch] = [count('major'), count('minor'), count('patch')];
  return {
    text:
      major + minor + patch === 0
        ? 'No changes to the contract.\n'
        : markdown(changes, root, (pointer) => named(pointer, [revised, original])),
    major,
    minor,
  };
}

const temp = mkdtempSync(join(tmpdir(), 'animal-store-diff-'));
const report: string[] = [];
try {
  let major = 0;
  let minor = 0;
  let since = args.since;
  if (args['base-file'] && args['revision-file']) {
    // Two files of one contract (fixtures, CI artefacts); --admin locates changes in the admin sources.
    const result = review(args['base-file'], args['revision-file'], args.admin ? adminSpecRoot : specRoot);
    report.push(result.text);
    major = result.major;
    minor = result.minor;
  } else {
    const change = changeOrExit('spec:diff', repoRoot, args.base);
    since ??= change.base;
    const checkout = join(temp, 'base');
    sourcesAt(change.base, checkout); // bundled like the working tree's
    const sections = contracts.map(({ title, root }, index) => {
      const where = relative(repoRoot, root);
      const heading = `# ${title} (${where})\n\n`;
      const revision = join(temp, `revision-${index}.json`);
      bundleTo(root, revision);
      const baseRoot = join(checkout, where);
      if (!existsSync(baseRoot)) return `${heading}A new contract: it is not in ${change.label}'s base.\n`;
      const base = join(temp, `base-${index}.json`);
      bundleTo(baseRoot, base);
      const result = review(base, revision, root);
      major += result.major;
      minor += result.minor;
      return `${heading}${result.text}`;
    });
    report.push(`Reviewed: ${change.label}.\n\n`, sections.join('\n'));
  }
  const needed = major > 0 ? 'major' : minor > 0 ? 'minor' : undefined;
  if (needed) {
    const changesets = await specChangesets(args.root, since);
    const enough = changesets.filter((c) => c.bump === 'major' || (needed === 'minor' && c.bump === 'minor'));
    const what = major > 0 ? `${major} breaking change(s)` : `${minor} additive change(s)`;
    const which = since ? 'added by this change' : 'pending';
    if (enough.length > 0) {
      const files = enough.map((c) => `.changeset/${c.id}.md`).join(', ');
      report.push(
        `\n${what}, recorded by the ${needed === 'major' ? 'major' : 'minor or major'} changeset ${files}.\n`,
      );
    } else {
      const found = changesets.map((c) => `${c.bump} in .changeset/${c.id}.md`).join(', ');
      report.push(
        `\n${what} for clients need a ${needed} changeset of @animal-store/spec ${which} (found: ${found || 'none'}). ` +
          `${major > 0 ? 'Avoid them, or record a major release' : 'Record a minor release'}: pnpm changeset (${needed} for @animal-store/spec).\n`,
      );
      process.exitCode = 1;
    }
  }
} finally {
  rmSync(temp, { recursive: true, force: true });
}
process.stdout.write(report.join(''));
if (process.env.GITHUB_STEP_SUMMARY) appendFileSync(process.env.GITHUB_STEP_SUMMARY, report.join(''));

type Impact = 'major' | 'minor' | 'patch';
type Verdict = { ruleId: string; impact: Impact; message: string; location?: { pointer: string } };
type Change = { path: string; kind: string; impact: Impact; property?: string; verdicts?: Verdict[] };

/**
 * Whether a change is only the bundler's: Redocly names the target of a `$ref` into another file's part
 * (Pet.yaml's `NewPet.yaml#/properties/birthDate`) as a component of its own (`#/components/schemas/
 * birthDate`), so a new property would show a second, "added component" row. A component with no source
 * file of its name is such a name; its adding or removal is shown where it is used (the operations' rows).
 */
function bundlingArtefact(change: Change, root: string): boolean {
  const component = /^#\/components\/schemas\/([^/]+)$/.exec(change.path)?.[1];
  if (!component || (change.kind !== 'added' && change.kind !== 'removed')) return false;
  return !existsSync(join(dirname(root), 'components/schemas', `${token(component)}.yaml`));
}

/** A JSON pointer's token as written: `~1` stands for `/`, `~0` for `~`. */
function token(part: string): string {
  return part.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** The value at a JSON pointer (`#/a/b~1c`), or undefined. */
function at(document: unknown, pointer: string): unknown {
  return pointer
    .replace(/^#\/?/, '')
    .split('/')
    .filter(Boolean)
    .map(token)
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], document);
}

function reclassify(change: Change, revised: unknown): Change {
  const verdicts = (change.verdicts ?? []).map((v) => {
    const schema = v.location && at(revised, v.location.pointer.replace(/\/enum$/, ''));
    const open = (schema as { 'x-open-enum'?: boolean } | undefined)?.['x-open-enum'] === true;
    if (v.ruleId === 'enum-values-added' && open)
      return { ...v, impact: 'minor' as const, message: `${v.message} (an open enum: minor)` };
    // A query parameter that now takes reserved characters as sent (`!`, `(`, `+` for a space): a request
    // encoded as before is read as before, so no client breaks; one that sends them bare is now taken.
    if (
      v.ruleId === 'parameter-serialization-changed' &&
      /`allowReserved` .* was set to 'true'/.test(v.message)
    )
      return {
        ...v,
        impact: 'minor' as const,
        message: `${v.message} (reserved characters now taken: minor)`,
      };
    return v;
  });
  const rank = { patch: 0, minor: 1, major: 2 };
  const impact = verdicts.length
    ? verdicts.reduce<Impact>((worst, v) => (rank[v.impact] > rank[worst] ? v.impact : worst), 'patch')
    : change.impact;
  return { ...change, verdicts, impact };
}

/** The node at `pointer` in the document, its `$ref` (within the document) followed. */
function resolved(document: unknown, pointer: string): unknown {
  const node = at(document, pointer);
  const ref = (node as { $ref?: unknown } | undefined)?.$ref;
  return typeof ref === 'string' && ref.startsWith('#') ? at(document, ref) : node;
}

/**
 * How a reviewer names what a pointer points at: an operation as `PATCH /pets/{petId}`, a parameter as
 * `GET /pets query.tag` (`in.name`), a property of a request or response body as `POST /pets body.tags` or
 * `GET /pets 200 body[].tags` (its path of properties, `[]` for an array's items); anything else as the
 * pointer itself. Read from whichever document has it (the revised one, else the base, for what was removed).
 */
function named(pointer: string, documents: unknown[]): string {
  const operation = /^#\/paths\/([^/]+)\/(get|put|post|delete|options|head|patch|trace)(\/.*)?$/.exec(
    pointer,
  );
  if (!operation) return pointer;
  const [, path = '', method = '', rest = ''] = operation;
  const of = `${method.toUpperCase()} ${token(path)}`;
  if (rest === '') return of;
  if (/^\/parameters\/\d+$/.test(rest)) {
    for (const document of documents) {
      const found = resolved(document, pointer) as { in?: string; name?: string } | undefined;
      if (found?.in && found.name) return `${of} ${found.in}.${found.name}`;
    }
  }
  const body =
    /^\/(?:requestBody|responses\/(\d{3}|default))\/content\/[^/]+\/schema((?:\/(?:items|properties\/[^/]+))*)$/.exec(
      rest,
    );
  if (!body) return pointer;
  const fields = [...(body[2] ?? '').matchAll(/\/(?:(items)|properties\/([^/]+))/g)]
    .map(([, items, property]) => (items ? '[]' : `.${token(property as string)}`))
    .join('');
  return `${of} ${body[1] ? `${body[1]} ` : ''}body${fields}`;
}

function markdown(changes: Change[], root: string, name: (pointer: string) => string): string {
  const icon = { major: '🔴 major', minor: '🟢 minor', patch: '⚪ patch' };
  const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const rows = changes.map((c) => {
    const pointer = `\`${name(c.path)}${c.property ? ` · ${c.property}` : ''}\``;
    // Messages quote names in backticks; a table cell shows them as they are.
    const details = (c.verdicts ?? []).map((v) => `${v.message} (${v.ruleId})`).join('<br>');
    const where =
      locate(c.property ? `${c.path}/${c.property}` : c.path, root) ??
      (c.kind === 'removed' ? 'removed' : '—');
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
    '| Impact | Change | What | Location | Details |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}
