// docs/decisions.md holds why each piece is written by hand; the code says so in one line that links to its
// entry. This holds the two together: every such line links to an entry, and every entry is linked.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const decisions = readFileSync(join(root, 'docs/decisions.md'), 'utf8');
const entries = [...decisions.matchAll(/^## (\S+)$/gm)].map((m) => m[1] as string);

/** The sources of the workspace (no dependencies, no build output, no generated code). */
function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return ['node_modules', 'dist', 'generated'].includes(entry.name) ? [] : sources(path);
    return /\.(ts|mjs)$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const said = ['apps', 'packages', 'scripts', 'spec'].flatMap(sources).flatMap((path) => {
  const text = readFileSync(join(root, path), 'utf8').replace(/\n\/\/ /g, ' ');
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
    const linked = new Set(said.map((s) => s.entry));
    expect(entries.filter((entry) => !linked.has(entry))).toEqual([]);
  });
});
