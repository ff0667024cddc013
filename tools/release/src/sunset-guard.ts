// The sunset guard (part of `pnpm lint`): a deprecated operation lives exactly until its removal date.
// - past its x-sunset and still in the spec: fail;
// - within the window before it (default 180 days): fail unless a pending major changeset of the spec
//   announces the removal (names the operationId);
// - otherwise: report how long is left;
// - gone from the spec before its x-sunset, as the last release published it (its `Sunset` header is a
//   promise to every client): fail, naming the date, whatever changeset is pending. The last release is
//   found in the checkout's history (change.ts): a shallow one fetches it, or the guard refuses (exit 2).
// Options (for CI and for the guard's own tests): --spec <file> (default: openapi/openapi.yaml),
// --published <file> (the contract as last released; default: the sources at the release commit),
// --today <YYYY-MM-DD> (default: today), --window-days <n> (default: SUNSET_WINDOW_DAYS or 180),
// --root <dir> (where .changeset/ is; default: the repository).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { changeOrExit } from './change.js';
import { loadSpec, pendingMajorChangesets, repoRoot, sourcesAt, specRoot } from './repo.js';

const { values: args } = parseArgs({
  options: {
    spec: { type: 'string', default: specRoot },
    published: { type: 'string' },
    today: { type: 'string' },
    'window-days': { type: 'string', default: process.env.SUNSET_WINDOW_DAYS ?? '180' },
    root: { type: 'string', default: repoRoot },
  },
});
type Operation = { operationId?: string; deprecated?: boolean; 'x-sunset'?: string };
type Api = { paths: Record<string, Record<string, Operation>> };
const api = loadSpec<Api>(args.spec);

/** The contract as the last release published it: --published, else bundled from the release commit. */
function published(): { api: Api; from: string } | undefined {
  if (args.published) return { api: loadSpec<Api>(args.published), from: args.published };
  const { release } = changeOrExit('sunset guard', repoRoot);
  if (!release) {
    process.stdout.write('sunset guard: nothing was released yet; removals not checked\n');
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-published-'));
  try {
    sourcesAt(release, dir);
    return {
      api: loadSpec<Api>(join(dir, relative(repoRoot, specRoot))),
      from: `release ${release.slice(0, 7)}`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const today = new Date(args.today ?? Date.now());
const windowDays = Number(args['window-days']);
const majors = await pendingMajorChangesets(args.root);
const day = 86_400_000;

let failed = false;
for (const [path, item] of Object.entries(api.paths)) {
  for (const [method, op] of Object.entries(item ?? {})) {
    if (!op.deprecated || !op['x-sunset']) continue;
    const name = `${op.operationId} (${method.toUpperCase()} ${path})`;
    const sunset = new Date(op['x-sunset']);
    const daysLeft = Math.ceil((sunset.getTime() - today.getTime()) / day);
    const date = op['x-sunset'].slice(0, 10);
    const announced = majors.find((c) => c.summary.includes(op.operationId ?? '\0'));
    if (daysLeft <= 0) {
      failed = true;
      process.stderr.write(
        `sunset guard: ${name} was to be removed on ${date} and is still in the spec. Remove it (a major changeset).\n`,
      );
    } else if (daysLeft <= windowDays && !announced) {
      failed = true;
      process.stderr.write(
        `sunset guard: ${name} is removed on ${date}, in ${daysLeft} days. Add a major changeset that announces its removal (pnpm changeset, naming ${op.operationId}).\n`,
      );
    } else {
      const note = announced ? `; removal announced in .changeset/${announced.id}.md` : '';
      process.stdout.write(`sunset guard: ${name} is removed on ${date}, in ${daysLeft} days${note}.\n`);
    }
  }
}
// Removed before its date: what a release promised (Deprecation, Sunset) holds until that date.
const promised = published();
for (const [path, item] of Object.entries(promised?.api.paths ?? {})) {
  for (const [method, op] of Object.entries(item ?? {})) {
    if (!op.deprecated || !op['x-sunset'] || api.paths[path]?.[method]) continue;
    const date = op['x-sunset'].slice(0, 10);
    if (new Date(op['x-sunset']).getTime() <= today.getTime()) continue;
    failed = true;
    process.stderr.write(
      `sunset guard: ${op.operationId} (${method.toUpperCase()} ${path}) is gone from the spec before its sunset, ${date}, ` +
        `which ${promised?.from} published (Sunset: ${date}); it stays until then, whatever changeset is pending (docs/getpet-removal.md).\n`,
    );
  }
}
if (failed) process.exitCode = 1;
