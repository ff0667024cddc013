// docs/decisions.md holds why each piece is written by hand; the code says so in one line that links to its
// entry. This holds the two together: every such line links to an entry, and every entry is linked.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const decisions = readFileSync(join(root, 'docs/decisions.md'), 'utf8');
const entries = [...decisions.matchAll(/^## (\S+)$/gm)].map((m) => m[1] as string);

/** The sources of the workspace, shell scripts too (no dependencies, no build output, no generated code). */
function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return ['node_modules', 'dist', 'generated'].includes(entry.name) ? [] : sources(path);
    return /\.(ts|tsx|mjs|js|sh)$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const texts = ['apps', 'deploy', 'packages', 'scripts', 'spec', 'tools'].flatMap(sources).map((path) => ({
  path,
  text: readFileSync(join(root, path), 'utf8').replace(/\n\/\/ /g, ' '),
}));
/** Every entry the code links to, "written by hand" or not (a figure that decided, e.g. a flag's value). */
const links = new Set(
  texts.flatMap(({ text }) => [...text.matchAll(/docs\/decisions\.md#([\w-]+)/g)].map((m) => m[1])),
);
const said = texts.flatMap(({ path, text }) => {
  return [
    ...text.matchAll(/[Ww]ritten by hand(?:[^:\n]*): docs\/decisions\.md#([\w-]+)|[Ww]ritten by hand/g),
  ].map((m) => ({ path, entry: m[1] }));
});

describe('docs/decisions.md', () => {
  it('has an entry for every piece the code says is written by hand, linked in one line', () => {
    expect(said.length).toBeGreaterThan(10);
    for (const { path, entry } of said) {
      expect(entry, `${path} says "written by hand" without a link to docs/decisions.md`).toBeDefined();
      expect(entries, path).toContain(entry);
    }
  });

  it('has no entry that nothing links to', () => {
    expect(entries.filter((entry) => !links.has(entry))).toEqual([]);
    expect([...links].filter((link) => !entries.includes(link as string))).toEqual([]);
  });
});
