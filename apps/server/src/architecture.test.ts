// The import rules of docs/architecture.md, checked on the source: every module of src/ (a folder, or a
// file at the top) sits on a layer, and imports only from layers below its own. So no folder imports
// one that imports it back (no cycle), and a new folder fails here until the document and this table
// give it a place.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = dirname(fileURLToPath(import.meta.url));

/** Each module's layer, bottom (0) to top; the same list as docs/architecture.md. */
export const layers: Record<string, number> = {
  'redis-url': 0,
  config: 1,
  contract: 1,
  plans: 1,
  version: 1,
  bounds: 1,
  'when-done': 1,
  'env-file': 1,
  stops: 1,
  'log-output': 1,
  limits: 2,
  runtime: 2,
  tracing: 2,
  'connection-slots': 2,
  store: 3,
  ops: 4,
  usage: 4,
  http: 5,
  api: 6,
  admin: 6,
  cli: 6,
  server: 6,
  lifecycle: 6,
  primary: 7,
  compose: 8,
  run: 9,
  main: 10,
  index: 8,
};

const sources = (readdirSync(src, { recursive: true }) as string[]).filter(
  (f) => f.endsWith('.ts') && !f.endsWith('.test.ts'),
);
/** The module a file of src/ belongs to: its first folder, or its own name at the top. */
const moduleOf = (file: string) => file.split('/')[0]?.replace(/\.[jt]s$/, '') ?? file;
const imports = sources.flatMap((file) =>
  [...readFileSync(join(src, file), 'utf8').matchAll(/(?:from|import)\s+'(\.{1,2}\/[^']+)'/g)].map((m) => ({
    file,
    from: moduleOf(file),
    target: relative(src, resolve(src, dirname(file), m[1] as string)),
    to: moduleOf(relative(src, resolve(src, dirname(file), m[1] as string))),
  })),
);

describe('the architecture (docs/architecture.md)', () => {
  it('gives every module of src/ a layer', () => {
    expect(sources.length).toBeGreaterThan(40);
    expect([...new Set(sources.map(moduleOf))].filter((m) => layers[m] === undefined)).toEqual([]);
  });

  it('imports only from lower layers (so no folder cycle)', () => {
    expect(imports.length).toBeGreaterThan(100);
    const upward = imports.filter(
      ({ from, to }) => from !== to && (layers[to] ?? Number.POSITIVE_INFINITY) >= (layers[from] ?? -1),
    );
    expect(upward).toEqual([]);
  });

  it('picks an engine only in store/open.ts: no module outside store/ imports an engine folder', () => {
    const engines = imports.filter(
      ({ from, target }) =>
        from !== 'store' && from !== 'index' && /^store\/(sqlite|postgres|redis)\//.test(target),
    );
    expect(engines).toEqual([]);
  });

  it('the document lists the same layers', () => {
    const doc = readFileSync(join(src, '../../../docs/architecture.md'), 'utf8');
    for (const [name, layer] of Object.entries(layers)) {
      expect(doc, name).toMatch(new RegExp(`^- \\*\\*Layer ${layer}\\*\\*: [^—]*\`${name}\`[^—]* — `, 'm'));
    }
    // and no module the code does not have (the list once listed a `redis-address` long gone)
    const listed = [...doc.matchAll(/^- \*\*Layer \d+\*\*: ([^—]+) — /gm)].flatMap(([, cell = '']) =>
      [...cell.matchAll(/`([^`]+)`/g)].map(([, name]) => name as string),
    );
    expect(listed.length).toBeGreaterThan(20);
    expect(listed.filter((name) => layers[name] === undefined)).toEqual([]);
  });
});
