// `pnpm release [--dry-run] [--skip-tests]`: build, test, then publish the fixed group with Changesets to
// the registry npm is configured for (for the @animal-store scope: `npm config get @animal-store:registry`,
// else `registry`), and tag the release commit `v<version>`: one tag for the group, which has one version
// (Changesets' own per-package tags, `@animal-store/server@2.3.0`, are not made). A version of the group
// that the registry already has stops the release before anything is published (Changesets would skip it
// silently), unless every package of the group has it: with --unless-published that is "nothing to
// release" and exit 0 (release.yml runs it after every merge, pending changesets or not). --dry-run
// publishes nothing and needs no network: it packs each package and lists its tarball.
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const usage = `Usage: pnpm release [--dry-run] [--skip-tests] [--unless-published]

Builds, runs every test (pnpm test), then publishes @animal-store/spec, @animal-store/server and
@animal-store/client at their one version, and tags the commit v<version>. Nothing is published when a
test fails or the registry already has that version. docs/releasing.md has the whole flow.

  --dry-run     pack each package and list its files instead of publishing (no network)
  --skip-tests  build only, then publish or pack
  --unless-published
                when the registry has this version of every package already, say so and exit 0
                (the release workflow after a merge that leaves nothing to release)
  --help        this text
`;

let args: { 'dry-run': boolean; 'skip-tests': boolean; 'unless-published': boolean; help: boolean };
try {
  args = parseArgs({
    options: {
      'dry-run': { type: 'boolean', default: false },
      'skip-tests': { type: 'boolean', default: false },
      'unless-published': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }).values;
} catch (error) {
  process.stderr.write(`release: ${(error as Error).message}\n\n${usage}`);
  process.exit(2);
}
if (args.help) {
  process.stdout.write(usage);
  process.exit(0);
}
const dryRun = args['dry-run'];
const run = (args: string[], cwd?: string) =>
  execFileSync('pnpm', args, { stdio: 'inherit', ...(cwd && { cwd }) });

type Workspace = { name: string; version: string; path: string; private?: boolean };
const published = (
  JSON.parse(
    execFileSync('pnpm', ['ls', '-r', '--json', '--depth', '-1'], { encoding: 'utf8' }),
  ) as Workspace[]
).filter((p) => !p.private);

if (dryRun) {
  run(['build']);
  if (!args['skip-tests']) run(['test']);
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
  const list = already.map((p) => `${p.name}@${p.version}`).join(', ');
  if (args['unless-published'] && already.length === published.length) {
    process.stdout.write(`release: ${list} already published: nothing to release.\n`);
    process.exit(0);
  }
  if (already.length > 0) {
    process.stderr.write(
      `release: ${list} already published; nothing was published. Version the packages first (pnpm version-packages).\n`,
    );
    process.exit(1);
  }
  run(['build']);
  if (!args['skip-tests']) run(['test']);
  run(['changeset', 'publish', '--no-git-tag']);
  tagRelease(published[0]?.version as string);
}

/** Tags HEAD `v<version>` (annotated), where it is a commit and the tag is not there yet. */
function tagRelease(version: string) {
  const tag = `v${version}`;
  const git = (...gitArgs: string[]) =>
    execFileSync('git', gitArgs, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  try {
    git('rev-parse', '--verify', 'HEAD');
  } catch {
    process.stdout.write(`release: not tagged (no commit yet): tag the release commit ${tag} by hand\n`);
    return;
  }
  if (git('tag', '--list', tag) === '') git('tag', '--annotate', tag, '--message', `Animal Store ${version}`);
  process.stdout.write(
    `release: ${tag} names ${git('rev-parse', '--short=7', 'HEAD')}; push it: git push origin ${tag}\n`,
  );
}
