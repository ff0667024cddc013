// Programs from Debian that some tests drive. `pnpm test` installs the missing ones first when it can
// (bin/debian-tools.sh); a suite whose program is still missing is skipped with one line naming the
// package, and under CI=true fails instead, as the suites that need an engine do.
import { execFileSync } from 'node:child_process';

const install = (pkg: string) =>
  `${pkg} is missing: apt-get install ${pkg} (as root, \`pnpm test\` installs it itself)`;

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

const findChromium = () => process.env.CHROMIUM_PATH ?? onPath('chromium') ?? onPath('chromium-browser');

/** Chromium: CHROMIUM_PATH, else `chromium` or `chromium-browser` on the PATH. */
export function chromiumPath(): string {
  const found = findChromium();
  if (!found) throw new Error(`${install('chromium')}; or set CHROMIUM_PATH`);
  return found;
}

/**
 * The path of the program `suite` needs, or undefined after one line on stderr saying the suite is
 * skipped and which package to install. Under CI=true a missing program throws instead: CI runs every suite.
 */
export function toolFor(suite: string, command: string, debianPackage = command): string | undefined {
  const found = command === 'chromium' ? findChromium() : onPath(command);
  if (found) return found;
  const line = `${suite}: ${install(debianPackage)}`;
  if (process.env.CI) throw new Error(`CI needs every suite; ${line}`);
  process.stderr.write(`skipping ${line}\n`);
  return undefined;
}
