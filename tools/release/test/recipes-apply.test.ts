// The fast half of test-slow/recipes.test.ts: docs/recipes/*.patch still merge into the working tree as it is
// (src/recipes.ts: three-way, from the version each was made on), and a change a contributor makes beside
// them, such as another Pet field at the end of the same lists, never asks for a recipe to be remade. The
// slow test proves what the merged tree makes (minutes, in `pnpm test:release` only). The files the recipes
// touch are copied to a directory outside any repository: nothing in this repository is written.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { mergeRecipe, recipeFiles } from '../src/recipes.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../../', import.meta.url));
const patches = ['pet-tags.patch', 'update-pet.patch'].map((name) => join(repo, 'docs/recipes', name));
const work = mkdtempSync(join(tmpdir(), 'recipes-apply-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A copy of the files the recipes touch, as the working tree has them, under a directory of its own. */
function copyOfTouched(name: string): string {
  const dir = join(work, name);
  for (const { path } of patches.flatMap(recipeFiles)) {
    if (!existsSync(join(repo, path))) continue; // a file a recipe creates
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    cpSync(join(repo, path), join(dir, path));
  }
  return dir;
}

/** Each line a recipe adds (`+` lines of its diffs), to find in the merged tree. */
const addedLines = (patch: string) =>
  recipeFiles(patch).flatMap(({ path, diff }) =>
    diff
      .split('\n')
      .filter((line) => line.startsWith('+') && !line.startsWith('+++') && line.trim() !== '+')
      .map((line) => ({ path, line: line.slice(1) })),
  );

/** Merges both recipes into `dir` and checks that every line they add is there, with no conflict marker. */
function mergedWhole(dir: string) {
  for (const patch of patches) mergeRecipe(patch, dir, repo);
  for (const patch of patches)
    for (const { path, line } of addedLines(patch))
      expect(readFileSync(join(dir, path), 'utf8'), `${path} from ${patch}`).toContain(line);
  for (const { path } of patches.flatMap(recipeFiles))
    expect(readFileSync(join(dir, path), 'utf8'), path).not.toMatch(/^(<{7}|>{7}|={7})( |$)/m);
}

/** Another Pet field by CONTRIBUTING's recipe, at the end of each list the pet-tags recipe also ends. */
function addBirthDate(dir: string) {
  const edit = (path: string, from: RegExp, to: string) => {
    const text = readFileSync(join(dir, path), 'utf8');
    expect(text, path).toMatch(from);
    writeFileSync(join(dir, path), text.replace(from, to));
  };
  edit(
    'spec/openapi/components/schemas/Pet.yaml',
    /(\n {2}status:\n {4}\$ref: PetStatus\.yaml\n)/,
    '$1  birthDate:\n    $ref: NewPet.yaml#/properties/birthDate\n',
  );
  edit(
    'apps/server/src/store/rows.ts',
    /(\n {2}status: \{ column: 'status', kind: 'text' \},\n)/,
    "$1  birthDate: { column: 'birth_date', kind: 'text' },\n",
  );
  edit(
    'apps/server/src/store/sqlite/migrations.ts',
    /(\n\];\n)/,
    "\n  'ALTER TABLE pets ADD COLUMN birth_date TEXT;',$1",
  );
  edit(
    'apps/server/src/store/postgres/migrations.ts',
    /(\n\];\n)/,
    "\n  'ALTER TABLE pets ADD COLUMN birth_date DATE;',$1",
  );
}

describe('the recipes (docs/recipes/*.patch), merged into the working tree', () => {
  it('both merge, every line they add is there, and no conflict is left', () => {
    const dir = copyOfTouched('as-is');
    expect(new Set(patches.flatMap(recipeFiles).map((f) => f.path)).size).toBeGreaterThan(10);
    mergedWhole(dir);
    expect(existsSync(join(dir, 'apps/server/test/every-engine/tag-filter.test.ts'))).toBe(true);
    expect(existsSync(join(dir, 'apps/server/test/every-engine/update-pet.test.ts'))).toBe(true);
  });

  it('after a contributor adds a Pet field at the end of the same lists, both still merge, and keep the field', async () => {
    const dir = copyOfTouched('with-a-field');
    addBirthDate(dir);
    // Plain `git apply` refuses: the recipe's context moved (what made every Pet pull request remake it).
    const plain = await run('git', ['apply', '--check', patches[0] as string], { cwd: dir }).then(
      () => 'applies',
      () => 'refused',
    );
    expect(plain).toBe('refused');
    mergedWhole(dir);
    const pet = readFileSync(join(dir, 'spec/openapi/components/schemas/Pet.yaml'), 'utf8');
    expect(pet).toMatch(/birthDate:[\s\S]*tags:|tags:[\s\S]*birthDate:/);
  });

  it('a recipe whose file is gone can no longer be made, and says which', () => {
    const dir = copyOfTouched('without-a-file');
    rmSync(join(dir, 'apps/server/src/store/rows.ts'));
    expect(() => mergeRecipe(patches[0] as string, dir, repo)).toThrow(
      /apps\/server\/src\/store\/rows\.ts is gone/,
    );
  });
});
