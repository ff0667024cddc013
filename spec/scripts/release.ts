// `pnpm release [--dry-run] [--skip-tests]`: build, test, then publish the fixed group with Changesets.
// --dry-run publishes nothing and needs no network: it packs each package and lists its tarball.
import { execFileSync } from 'node:child_process';

const dryRun = process.argv.includes('--dry-run');
const run = (args: string[], cwd?: string) =>
  execFileSync('pnpm', args, { stdio: 'inherit', ...(cwd && { cwd }) });

run(['build']);
if (!process.argv.includes('--skip-tests')) run(['test']);

if (dryRun) {
  type Workspace = { name: string; version: string; path: string; private?: boolean };
  const packages = JSON.parse(
    execFileSync('pnpm', ['ls', '-r', '--json', '--depth', '-1'], { encoding: 'utf8' }),
  ) as Workspace[];
  for (const pkg of packages.filter((p) => !p.private)) run(['pack', '--dry-run'], pkg.path);
  process.stdout.write('\nDry run: nothing was published.\n');
} else {
  run(['changeset', 'publish']);
}
