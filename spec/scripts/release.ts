// `pnpm release [--dry-run] [--skip-tests]`: build, test, then publish the fixed group with Changesets to
// the registry npm is configured for (for the @animal-store scope: `npm config get @animal-store:registry`,
// else `registry`). A version of the group that the registry already has stops the release before anything
// is published (Changesets would skip it silently). --dry-run publishes nothing and needs no network: it
// packs each package and lists its tarball.
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    'dry-run': { type: 'boolean', default: false },
    'skip-tests': { type: 'boolean', default: false },
  },
});
const dryRun = args['dry-run'];
const run = (args: string[], cwd?: string) =>
  execFileSync('pnpm', args, { stdio: 'inherit', ...(cwd && { cwd }) });

type Workspace = { name: string; version: string; path: string; private?: boolean };
const published = (
  JSON.parse(
    execFileSync('pnpm', ['ls', '-r', '--json', '--depth', '-1'], { encoding: 'utf8' }),
  ) as Workspace[]
).filter((p) => !p.private);

run(['build']);
if (!args['skip-tests']) run(['test']);

if (dryRun) {
  for (const pkg of published) run(['pack', '--dry-run'], pkg.path);
  process.stdout.write('\nDry run: nothing was published.\n');
} else {
  const already = published.filter((pkg) => {
    try {
      // From the repository root, so that its .npmrc (the registry of the scope) applies.
      const found = execFileSync('npm', ['view', `${pkg.name}@${pkg.version}`, 'version'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      return found.trim() === pkg.version;
    } catch {
      return false; // not there (404): to be published
    }
  });
  if (already.length > 0) {
    process.stderr.write(
      `release: ${already.map((p) => `${p.name}@${p.version}`).join(', ')} already published; nothing was published. Version the packages first (pnpm version-packages).\n`,
    );
    process.exit(1);
  }
  run(['changeset', 'publish']);
}
