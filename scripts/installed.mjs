// Run first by `pnpm start` and `pnpm keys`: a checkout whose dependencies changed since the last
// `pnpm install` (or that never had one) stops here with one line saying so, instead of a build that fails
// with a "Cannot find module" per missing package. pnpm rewrites node_modules/.modules.yaml at every
// install, and git touches pnpm-lock.yaml only when a checkout changes it.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repository = fileURLToPath(new URL('..', import.meta.url));
const install = "npx -y -p node@24 -p pnpm@10 -c 'pnpm install --frozen-lockfile'";

/** Why the dependencies under `root` do not match its lockfile, in one line; undefined when they do. */
export function installProblem(root = repository) {
  const installed = join(root, 'node_modules/.modules.yaml');
  if (!existsSync(installed)) return `No dependencies installed: run ${install} first.`;
  if (statSync(join(root, 'pnpm-lock.yaml')).mtimeMs > statSync(installed).mtimeMs)
    return `The dependencies changed since the last install (pnpm-lock.yaml is newer): run ${install} first.`;
  return undefined;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const problem = installProblem();
  if (problem) {
    process.stderr.write(`${problem}\n`);
    process.exit(1);
  }
}
