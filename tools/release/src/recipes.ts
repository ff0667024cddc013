// A recipe (docs/recipes/*.patch) merged three-way into a tree, so that a change elsewhere in the files it
// touches (another Pet field at the end of the same list) never makes a contributor remake it. Each file is
// merged from three versions: the blob the recipe was made on (its `index` line, read from this
// repository's history), that blob with the recipe's hunks applied, and the file as the tree has it now.
// Where the tree and the recipe both added lines at one place, both are kept (`git merge-file --union`):
// lists of fields, columns and migrations, which is where they meet. The recipe fails only when its own
// feature can no longer be made: a file it changes is gone, or the blob it was made on is not in the history.
// The slow tier then proves the merged tree generates, builds and passes its suites.
// Written by hand: docs/decisions.md#recipe-merge
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** One file's part of a recipe: its path, the blob it was made on (undefined: a new file), and its diff. */
export type RecipeFile = { path: string; base: string | undefined; diff: string };

/** The files a recipe patch changes, each with its own part of the patch. */
export function recipeFiles(patch: string): RecipeFile[] {
  return readFileSync(patch, 'utf8')
    .split(/^(?=diff --git )/m)
    .filter((part) => part.startsWith('diff --git '))
    .map((diff) => {
      const path = /^diff --git a\/(\S+) b\//.exec(diff)?.[1] as string;
      const base = /^index ([0-9a-f]+)\.\./m.exec(diff)?.[1];
      return { path, base: base && !/^0+$/.test(base) ? base : undefined, diff };
    });
}

/** Merges the recipe at `patch` into the files under `tree`; `repo` holds the blobs it was made on. */
export function mergeRecipe(patch: string, tree: string, repo: string): string[] {
  const work = mkdtempSync(join(tmpdir(), 'recipe-merge-'));
  try {
    return recipeFiles(patch).map(({ path, base, diff }) => {
      const target = join(tree, path);
      if (base && !existsSync(target))
        throw new Error(`${patch}: ${path} is gone from the tree; the recipe can no longer be made as it is`);
      let original = '';
      if (base) {
        try {
          original = execFileSync('git', ['cat-file', 'blob', base], { cwd: repo, encoding: 'utf8' });
        } catch {
          throw new Error(`${patch}: the version of ${path} it was made on (${base}) is not in the history`);
        }
      }
      // The recipe's version: its hunks applied to the version it was made on (outside any repository).
      const made = join(work, 'made');
      rmSync(made, { recursive: true, force: true });
      mkdirSync(dirname(join(made, path)), { recursive: true });
      if (base) writeFileSync(join(made, path), original);
      writeFileSync(join(work, 'part.patch'), diff);
      execFileSync('git', ['apply', join(work, 'part.patch')], { cwd: made, stdio: 'pipe' });
      const recipe = readFileSync(join(made, path), 'utf8');
      if (!existsSync(target)) {
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, recipe);
        return path;
      }
      const versions = ['ours', 'base', 'theirs'].map((name) => join(work, name));
      [readFileSync(target, 'utf8'), original, recipe].forEach((text, i) => {
        writeFileSync(versions[i] as string, text);
      });
      const merged = execFileSync('git', ['merge-file', '--union', '-p', ...versions], { encoding: 'utf8' });
      writeFileSync(target, merged);
      return path;
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
