// Programs from Debian that some tests drive. A missing one fails the test with one line that names the
// package and the install command, instead of `spawn ... ENOENT`.
import { execFileSync } from 'node:child_process';

const install = (pkg: string) =>
  `${pkg} is missing: apt-get install ${pkg} (.ci/run installs it when missing)`;

/** The absolute path of `command` on the PATH, or undefined. */
export function onPath(command: string): string | undefined {
  try {
    return (
      execFileSync('sh', ['-c', 'command -v "$1"', 'sh', command], { encoding: 'utf8' }).trim() || undefined
    );
  } catch {
    return undefined;
  }
}

/** `command` on the PATH, or an Error naming the Debian package to install. */
export function requireTool(command: string, debianPackage = command): string {
  const found = onPath(command);
  if (!found) throw new Error(install(debianPackage));
  return found;
}

/** Chromium: CHROMIUM_PATH, else `chromium` or `chromium-browser` on the PATH. */
export function chromiumPath(): string {
  const found = process.env.CHROMIUM_PATH ?? onPath('chromium') ?? onPath('chromium-browser');
  if (!found) throw new Error(`${install('chromium')}; or set CHROMIUM_PATH`);
  return found;
}
