// Part of the server's build: copies the console (apps/console, built first: it is a dev dependency, so turbo
// builds it before this package) into dist/console, which the admin listener serves at /console/
// (src/admin/console.ts). The server package carries the built files, so that neither an install from the
// registry nor the container image needs the console's workspace or its toolchain.
import { cpSync, existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const built = join(dirname(require.resolve('@animal-store/console/package.json')), 'dist');
if (!existsSync(join(built, 'index.html')))
  throw new Error(`the console is not built (${built}): run \`pnpm build\` at the workspace's root`);
const target = fileURLToPath(new URL('../dist/console', import.meta.url));
rmSync(target, { recursive: true, force: true });
cpSync(built, target, { recursive: true });
