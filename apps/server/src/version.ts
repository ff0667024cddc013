// The server package's own manifest (package.json, one level above src/ and dist/ alike): its version, and
// the Node.js range it runs on (engines.node, the one place that range is written).
import { readFileSync } from 'node:fs';
import semver from 'semver';

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
  engines: { node: string };
};

export const serverVersion = manifest.version;
export const supportedNode = manifest.engines.node;

/** Why this Node.js cannot run the service, in one line, or undefined when it can. */
export function unsupportedRuntime(version: string = process.version): string | undefined {
  if (semver.satisfies(version, supportedNode)) return undefined;
  return (
    `Animal Store needs Node.js ${supportedNode}; this is Node.js ${version}. Run it on a supported Node.js, ` +
    `e.g. npx -y -p node@24 -p pnpm@10 -c 'pnpm start' (the README's Quick start).`
  );
}
