// The sunset guard (part of `pnpm lint`): a deprecated operation cannot outlive its removal date.
// - past its x-sunset and still in the spec: fail;
// - within the window before it (default 180 days): fail unless a pending major changeset of the spec
//   announces the removal (names the operationId);
// - otherwise: report how long is left.
// Options (for CI and for the guard's own tests): --spec <file> (default: openapi/openapi.yaml),
// --today <YYYY-MM-DD> (default: today), --window-days <n> (default: SUNSET_WINDOW_DAYS or 180),
// --root <dir> (where .changeset/ is; default: the repository).
import { parseArgs } from 'node:util';
import { loadSpec, pendingMajorChangesets, repoRoot, specRoot } from './shared.js';

const { values: args } = parseArgs({
  options: {
    spec: { type: 'string', default: specRoot },
    today: { type: 'string' },
    'window-days': { type: 'string', default: process.env.SUNSET_WINDOW_DAYS ?? '180' },
    root: { type: 'string', default: repoRoot },
  },
});
type Operation = { operationId?: string; deprecated?: boolean; 'x-sunset'?: string };
const api = loadSpec<{ paths: Record<string, Record<string, Operation>> }>(args.spec);
const today = new Date(args.today ?? Date.now());
const windowDays = Number(args['window-days']);
const majors = await pendingMajorChangesets(args.root);
const day = 86_400_000;

let failed = false;
for (const [path, item] of Object.entries(api.paths)) {
  for (const [method, op] of Object.entries(item)) {
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
if (failed) process.exitCode = 1;
