// The fast half of test-slow/recipes.test.ts: docs/recipes/*.patch still apply, in order, to the working tree
// as it is. The slow test proves what they make (minutes, in `pnpm test:release` only); this one runs with
// the README's test command, so a change that stops a recipe applying fails there, before CI's release run
// (stop 69's work did not land because a migration added after pet-tags.patch was made broke its context).
// The files the patches touch are copied to a directory outside any repository, where `git apply` works as
// a plain patch program: nothing in this repository, its index or its objects is written.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../../', import.meta.url));
const patches = ['pet-tags.patch', 'update-pet.patch'].map((name) => join(repo, 'docs/recipes', name));
const work = mkdtempSync(join(tmpdir(), 'recipes-apply-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The paths a patch changes or reads (`diff --git a/<path> b/<path>`). */
const touched = (patch: string) =>
  [...readFileSync(patch, 'utf8').matchAll(/^diff --git a\/(\S+) b\//gm)].map((match) => match[1] as string);

it('docs/recipes/*.patch apply, one after the other, to the working tree as it is', async () => {
  const files = new Set(patches.flatMap(touched));
  expect(files.size).toBeGreaterThan(10); // the patches were read: each touches the spec, both engines, tests
  for (const file of files) {
    if (!existsSync(join(repo, file))) continue; // a file a patch creates
    mkdirSync(dirname(join(work, file)), { recursive: true });
    cpSync(join(repo, file), join(work, file));
  }
  for (const patch of patches) {
    // Rejects a hunk whose context moved or changed (git apply never applies with fuzz); the error names it.
    await run('git', ['apply', '--check', patch], { cwd: work }).catch((error: { stderr: string }) => {
      throw new Error(`${patch} no longer applies; remake it (docs/recipes/README.md):\n${error.stderr}`);
    });
    await run('git', ['apply', patch], { cwd: work });
  }
  expect(existsSync(join(work, 'apps/server/test/every-engine/tag-filter.test.ts'))).toBe(true);
  expect(existsSync(join(work, 'apps/server/test/every-engine/update-pet.test.ts'))).toBe(true);
});
