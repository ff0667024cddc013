// The contributor's recipes (CONTRIBUTING.md), followed once on a scratch copy of this working tree:
// docs/recipes/pet-tags.patch is an array field (Pet's `tags`, a JSON column on both engines) and a list
// filter (`GET /pets?tag=`) end to end, written by those recipes' steps. It must apply to the tree as it is,
// and the tree it makes must generate, build, type-check, pass its tests on SQLite and PostgreSQL, and pass
// the review (spec:diff, the changeset guard) with the changeset it adds. When a change to the tree breaks
// the patch, remake it from the recipe (the steps are the recipe's; docs/recipes/README.md says how).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repo, scratchCopy, sh } from './scratch.js';

const work = mkdtempSync(join(tmpdir(), 'animal-store-recipes-'));
const scratch = join(work, 'repo');
const patch = join(repo, 'docs/recipes/pet-tags.patch');

beforeAll(async () => {
  await scratchCopy(scratch, { commit: true });
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the recipes "an array or object field" and "a list filter", followed (docs/recipes/pet-tags.patch)', () => {
  it('the patch applies to the tree as it is', async () => {
    await sh(`git apply --check ${patch} && git apply ${patch}`, scratch);
    expect((await sh('git status --short', scratch)).stdout).toContain(
      'spec/openapi/components/parameters/Tag.yaml',
    );
  });

  it('generates, builds and type-checks every workspace', async () => {
    await sh('pnpm generate && pnpm build && pnpm typecheck', scratch);
    expect((await sh('git status --short spec/src/generated', scratch)).stdout).toMatch(/openapi\.ts/);
  });

  it('stores the field and filters by it on SQLite and PostgreSQL (the round trip, the filter, its cursor)', async () => {
    const { stdout } = await sh(
      'pnpm --filter @animal-store/server exec vitest run --project sqlite --project postgres test/every-engine/tag-filter.test.ts test/every-engine/pet-fields.test.ts test/every-engine/pagination.test.ts src/api/pets/cursor.test.ts',
      scratch,
      { NO_COLOR: '1' },
    );
    expect(stdout).toMatch(/Tests\s+\d+ passed \(\d+\)/); // vitest exits non-zero on any failure: sh throws
    expect(stdout).toContain('tags'); // pet-fields names every property it round-trips
  });

  it('passes the review: spec:diff rates it minor and names the filter, the changeset guard is satisfied', async () => {
    const { stdout } = await sh('pnpm --silent spec:diff --base HEAD', scratch);
    expect(stdout).toMatch(/🟢 minor \| added \| `GET \/pets query\.tag`/);
    expect(stdout).toMatch(/recorded by the minor or major changeset .*\.changeset\/pet-tags\.md/);
    await sh('node tools/release/src/changeset-guard.mjs', scratch);
  });
});
