// The contributor's recipes (CONTRIBUTING.md), followed once on a scratch copy of this working tree, as
// docs/recipes/*.patch: pet-tags.patch is an array field (Pet's `tags`, a JSON column on both engines) and a
// list filter (`GET /pets?tag=`) end to end; update-pet.patch a new operation (`PATCH /pets/{petId}`), its
// store method on both engines, its client method and its contract-test scenarios. Each is merged into the
// tree as it is, three-way from the version it was made on (src/recipes.ts), and together they must
// generate, build, type-check, pass their suites on SQLite and PostgreSQL and against Prism, and pass the
// review (spec:diff, the guards) with the changesets they add. Only when its own feature can no longer be
// made on the tree is a recipe remade (docs/recipes/README.md).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeRecipe } from '../src/recipes.js';
import { repo, scratchCopy, sh } from './scratch.js';

const work = mkdtempSync(join(tmpdir(), 'animal-store-recipes-'));
const scratch = join(work, 'repo');
const patches = ['pet-tags.patch', 'update-pet.patch'].map((name) => join(repo, 'docs/recipes', name));
/** vitest's summary line, read without colours; vitest exits non-zero on any failure, so `sh` throws. */
const passed = /Tests\s+\d+ passed \(\d+\)/;

beforeAll(async () => {
  await scratchCopy(scratch, { commit: true });
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the recipes, followed (docs/recipes/*.patch)', () => {
  it.each(patches)('%s merges into the tree as it is', (patch) => {
    expect(mergeRecipe(patch, scratch, repo).length).toBeGreaterThan(3);
  });

  it('generates, builds and type-checks every workspace', async () => {
    expect((await sh('git status --short', scratch)).stdout).toMatch(/parameters\/Tag\.yaml[\s\S]*PetChange/);
    await sh('pnpm generate && pnpm build && pnpm typecheck', scratch);
    expect((await sh('git status --short spec/src/generated', scratch)).stdout).toMatch(/openapi\.ts/);
  });

  it('the field, the filter and the operation hold on SQLite and PostgreSQL', async () => {
    const suites = [
      'test/every-engine/tag-filter.test.ts',
      'test/every-engine/pet-fields.test.ts',
      'test/every-engine/pagination.test.ts',
      'test/every-engine/update-pet.test.ts',
      'test/every-engine/auth.test.ts',
      'src/api/pets/cursor.test.ts',
    ];
    const { stdout } = await sh(
      // Verbose: every test's name is printed, not only a slow one's (pet-fields' name was printed only
      // when it took over 300 ms, and a quick run failed the check below).
      `pnpm --filter @animal-store/server exec vitest run --reporter=verbose --project unit --project sqlite --project postgres ${suites.join(' ')}`,
      scratch,
      { NO_COLOR: '1' },
    );
    expect(stdout).toMatch(passed);
    expect(stdout).toContain('tags'); // pet-fields names every property it round-trips
  });

  it('the server behind Prism and the client against its mock keep the contract, the new operation too', async () => {
    const { stdout } = await sh('pnpm --filter @animal-store/contract-tests test', scratch, {
      NO_COLOR: '1',
    });
    expect(stdout).toMatch(passed);
  });

  it('passes the review: spec:diff rates both minor and names them, the changeset guard is satisfied', async () => {
    const { stdout } = await sh('pnpm --silent spec:diff --base HEAD', scratch);
    expect(stdout).toMatch(/🟢 minor \| added \| `GET \/pets query\.tag`/);
    expect(stdout).toMatch(/🟢 minor \| added \| `PATCH \/pets\/\{petId\}`/);
    expect(stdout).not.toMatch(/🔴 major/);
    expect(stdout).toMatch(/recorded by the minor or major changeset .*\.changeset\/pet-tags\.md/);
    await sh('pnpm --silent guards', scratch);
  });
});
