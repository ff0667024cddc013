// Part of the server's build: writes dist/build.json, the version this build reports (the listening line,
// /healthz, animal_store_build_info, --version). A build of the release itself reports the release's version
// (package.json); a build from any later commit, between releases, reports it with the commit as build
// metadata, `2.0.0+1a2b3c4`, so that an instance built from main is never taken for the release it follows.
// The release's commit is the one that versioned it: the last to change this package's CHANGELOG.md
// (`pnpm version-packages` writes it). Outside a git checkout (a package installed from the registry),
// the release's version. A build without the checkout (the container image's: .git is not in its context)
// is told the version by BUILD_VERSION, which `--print` computes on the host (docs/container.md).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('..', import.meta.url));

/** The version a build of the package in `dir` (its folder, with package.json) at HEAD reports. */
export function buildVersion(dir = here, given = process.env.BUILD_VERSION) {
  if (given) {
    if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/.test(given))
      throw new Error(`BUILD_VERSION: ${given} is not a version (2.2.0, or 2.2.0+1a2b3c4)`);
    return given;
  }
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const git = (...args) => {
    try {
      const options = { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] };
      return execFileSync('git', args, options).trim();
    } catch {
      return '';
    }
  };
  const head = git('rev-parse', '--short=7', 'HEAD');
  if (!head) return version;
  const released = git('log', '-1', '--format=%h', '--abbrev=7', '--', 'CHANGELOG.md');
  return released === head ? version : `${version}+${head}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === '--print') {
  process.stdout.write(`${buildVersion()}\n`);
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  mkdirSync(new URL('../dist', import.meta.url), { recursive: true });
  writeFileSync(
    new URL('../dist/build.json', import.meta.url),
    `${JSON.stringify({ version: buildVersion() })}\n`,
  );
}
