// Copies the contract's TypeScript (spec/src: the types generated from the contract and the facts code needs
// as values) into src/generated/spec/, so that the published client stands alone: an app installs it and
// openapi-fetch, nothing else. The copy is not committed (it is git-ignored), so it can never drift from the
// contract; `build` and `typecheck` run it first, so each works alone on a fresh clone
// (`pnpm --filter @animal-store/client build`). turbo may run both at once: each file is written to a
// temporary name and renamed over the old one (atomic), only when its content changed, and nothing is
// deleted that the contract still has, so two copies at once never see a half-written or missing file.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const from = fileURLToPath(new URL('../node_modules/@animal-store/spec/src/', import.meta.url));
const to = fileURLToPath(new URL('../src/generated/spec/', import.meta.url));
const files = (root) =>
  readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)));
const read = (path) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

const wanted = files(from).filter((file) => file.endsWith('.ts') && !file.endsWith('files.ts')); // files.ts: Node paths
for (const file of wanted) {
  const content = readFileSync(join(from, file), 'utf8');
  const target = join(to, file);
  if (read(target) === content) continue;
  mkdirSync(dirname(target), { recursive: true });
  const temporary = `${target}.${process.pid}.tmp`;
  writeFileSync(temporary, content);
  renameSync(temporary, target);
}
for (const file of files(to)) {
  if (!wanted.includes(file) && !file.endsWith('.tmp')) rmSync(join(to, file), { force: true });
}
