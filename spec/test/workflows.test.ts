// The GitHub workflows cannot run here; they are validated against GitHub's workflow schema instead
// (@action-validator/core), and checked for what they promise.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateWorkflow } from '@action-validator/core';
import { describe, expect, it } from 'vitest';

const folder = fileURLToPath(new URL('../../.github/workflows/', import.meta.url));
const workflows = readdirSync(folder).filter((f) => f.endsWith('.yml'));
const read = (name: string) => readFileSync(join(folder, name), 'utf8');
const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');

describe('.github/workflows', () => {
  it('has the CI, spec review and release workflows', () => {
    expect(workflows.sort()).toEqual(['ci.yml', 'release.yml', 'spec-review.yml']);
  });

  it.each(workflows)('%s is a valid workflow', (name) => {
    expect(validateWorkflow(read(name)).errors).toEqual([]);
  });

  it('a broken workflow is reported (the validator can fail)', () => {
    expect(validateWorkflow(read('ci.yml').replace('runs-on:', 'runs-onn:')).errors).not.toEqual([]);
  });

  it("CI runs the README's test command on pull requests", () => {
    const command =
      /```sh\n(npx -y -p node@24 -p pnpm@10 -c 'pnpm install --frozen-lockfile && pnpm test')\n```/.exec(
        readme,
      )?.[1];
    expect(command).toBeDefined();
    expect(read('ci.yml')).toContain(`run: ${command}`);
    expect(read('ci.yml')).toMatch(/on:\n\s+pull_request:/);
  });

  it('the spec review posts spec:diff, updates its own comment, and fails on a breaking change', () => {
    const review = read('spec-review.yml');
    expect(review).toContain('spec:diff --base');
    expect(review).toContain('updateComment');
    expect(review).toContain("if: steps.diff.outputs.status != '0'");
    // Both contracts: a change to the admin contract alone is reviewed too.
    const paths = /pull_request:\n\s+paths: \[(.*)\]/.exec(review)?.[1] ?? '';
    expect(paths.split(',').map((p) => p.trim())).toContain('"spec/**"');
  });

  it('publishing uses the Changesets action with the release script', () => {
    const release = read('release.yml');
    expect(release).toContain('uses: changesets/action@v1');
    expect(release).toContain('release --skip-tests');
  });
});
