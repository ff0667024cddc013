// The server package's own manifest (package.json, one level above src/ and dist/ alike): its version, and
// the Node.js range it runs on (engines.node, the one place that range is written); and the build's version.
import { readFileSync } from 'node:fs';
import semver from 'semver';

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
  engines: { node: string };
};

/**
 * The version this process reports: the release's, or between releases `<release>+<commit>`, as the build
 * wrote it (dist/build.json: scripts/build-info.mjs); the release's when run from the sources.
 */
export const serverVersion = ((): string => {
  try {
    const build = readFileSync(new URL('./build.json', import.meta.url), 'utf8');
    return (JSON.parse(build) as { version: string }).version;
  } catch {
    return manifest.version;
  }
})();
export const supportedNode = manifest.engines.node;

/**
 * `command` as one runs it on any machine with npm, whatever its Node.js: under Node 24 and pnpm 10 from
 * the registry (the README's form). The one way every command the service prints is written.
 */
export const withNode24 = (command: string) => `npx -y -p node@24 -p pnpm@10 -c '${command}'`;

/**
 * Why this Node.js cannot run the service, in one line, or undefined when it can. `command`: what was run
 * (`pnpm start`, `pnpm keys list`, ...), shown again in the form that runs it on a supported Node.js.
 */
export function unsupportedRuntime(
  version: string = process.version,
  command = 'pnpm start',
): string | undefined {
  if (semver.satisfies(version, supportedNode)) return undefined;
  return (
    `Animal Store needs Node.js ${supportedNode}; this is Node.js ${version}. Run it on a supported Node.js, ` +
    `e.g. ${withNode24(command)} (the README's Quick start).`
  );
}
