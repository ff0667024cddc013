// The changeset guard (run by `pnpm lint:root`): a change users see, made since the last release, must come
// with a pending changeset, or the next CHANGELOG would not mention it (2.0.0 shipped without Sentinel,
// Cluster and the lease change in any note). "Users see" means what is released: the server's sources and
// bin, the console (the server ships it), the contracts, the client's sources, the container image and the
// alert rules; tests are not. The last release is the commit that last changed the server's version (the
// release commit: docs/releasing.md).
// Outside a git checkout with that history (a tarball, a shallow clone) it says so and passes.
// Written by hand: docs/decisions.md#changeset-guard.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = process.cwd();
const released = [
  'apps/server/src',
  'apps/server/bin',
  'apps/console/src',
  'spec/openapi',
  'spec/admin',
  'packages/client/src',
  'Containerfile',
  'deploy',
];
const git = (...args) => spawnSync('git', args, { cwd: root, encoding: 'utf8' });

const release = git('log', '-1', '--format=%H', '-G"version":', '--', 'apps/server/package.json');
if (release.status !== 0 || !release.stdout.trim()) {
  process.stdout.write('changeset guard: no release commit in this checkout’s history; not checked\n');
  process.exit(0);
}
const since = release.stdout.trim();
const changed = git('diff', '--name-only', since, '--', ...released)
  .stdout.split('\n')
  .filter((file) => file && !/\.test\.ts$/.test(file));
const dir = join(root, '.changeset');
const pending = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.md') && f !== 'README.md') : [];
if (changed.length > 0 && pending.length === 0) {
  process.stderr.write(
    `changeset guard: ${changed.length} released file(s) changed since the release commit ${since.slice(0, 7)}, ` +
      `and no changeset is pending (add one: docs/releasing.md, "The flow"):\n` +
      changed
        .slice(0, 10)
        .map((file) => `  ${file}\n`)
        .join(''),
  );
  process.exit(1);
}
