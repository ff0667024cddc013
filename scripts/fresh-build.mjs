// `pnpm start` and `pnpm keys` run the built server; this builds it first only when it is missing or a
// source it is built from is newer than it (the server's and the spec's sources), instead of asking turbo
// on every call (turbo's own check costs seconds, and under TURBO_FORCE it rebuilt a dist that other
// processes of the test suite were reading). Written by hand: docs/decisions.md#fresh-build.
// Build output goes to stderr, so that `pnpm --silent keys … --json` prints only the JSON.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repository = fileURLToPath(new URL('..', import.meta.url));
const sources = [
  'apps/server/src',
  'apps/server/package.json',
  'spec/src',
  'spec/openapi',
  'spec/admin',
  'spec/package.json',
];

/** The newest modification time under `path` (a file or a folder), in ms. */
function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

/** Whether the key command under `root` (the repository) must be built before it runs. */
export function isStale(root = repository) {
  const built = join(root, 'apps/server/dist/cli/keys.js');
  if (!existsSync(built)) return true;
  const builtAt = statSync(built).mtimeMs;
  return sources.some((source) => existsSync(join(root, source)) && newest(join(root, source)) > builtAt);
}

if (process.argv[1] === fileURLToPath(import.meta.url) && isStale()) {
  // turbo from this repository's node_modules, not through npx: under `npx -p node@24 -p pnpm@10 -c '…'`
  // (the README's form) a nested npx inherits that npx's own options and stops with a usage error.
  const turbo = spawnSync(
    join(repository, 'node_modules/.bin/turbo'),
    ['run', 'build', '--filter=@animal-store/server...', '--output-logs=errors-only'],
    { cwd: repository, stdio: ['ignore', 2, 2] },
  );
  process.exit(turbo.status ?? 1);
}
