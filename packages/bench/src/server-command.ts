// How the benches start the real server: the built tree's main and Node's flags as `pnpm start` gives them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
export const root = fileURLToPath(new URL('../../../', import.meta.url));
export const serverMain = join(root, 'apps/server/dist/main.js');
/** Node's flags for the server, as its bin gives them on its first line (`pnpm start` runs the bin). */
export const serverFlags = (
  readFileSync(join(root, 'apps/server/bin/animal-store-server.js'), 'utf8').split('\n')[0] ?? ''
)
  .split(/\s+/)
  .filter((word) => word.startsWith('--'));
