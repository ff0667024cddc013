// Where the contracts' sources are, and their bundle as one object (for the generated files). The tools
// that review and release them (spec:diff, the guards, the release) live in tools/release/.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const specDir = fileURLToPath(new URL('..', import.meta.url));
export const specRoot = join(specDir, 'openapi/openapi.yaml');
export const adminSpecRoot = join(specDir, 'admin/openapi.yaml');

/** A multi-file description bundled into one object by Redocly (each referenced file a component). */
export function bundleObject<T = Record<string, unknown>>(root: string): T {
  const json = execFileSync('redocly', ['bundle', root, '--ext', 'json'], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return JSON.parse(json) as T;
}
