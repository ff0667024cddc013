// Where a pointer into the bundled contract is written in the YAML sources: follows the pointer from
// openapi/openapi.yaml through the relative `$ref`s between files, and answers `file:line` (relative to the
// repository) of the deepest node reached. Used by spec:diff for its Location column.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from 'yaml';
import { repoRoot, specRoot } from './repo.js';

type Parsed = { root: Node | null; lines: LineCounter };
const cache = new Map<string, Parsed>();
function parse(file: string): Parsed {
  let parsed = cache.get(file);
  if (!parsed && !existsSync(file)) return { root: null, lines: new LineCounter() };
  if (!parsed) {
    const lines = new LineCounter();
    const document = parseDocument(readFileSync(file, 'utf8'), { lineCounter: lines });
    parsed = { root: document.contents as Node | null, lines };
    cache.set(file, parsed);
  }
  return parsed;
}

const child = (node: Node | null, key: string): Node | null => {
  if (isMap(node))
    return (node.items.find((p) => isScalar(p.key) && String(p.key.value) === key)?.value as Node) ?? null;
  if (isSeq(node)) return (node.items[Number(key)] as Node) ?? null;
  return null;
};

/** `spec/openapi/paths/pets.yaml:42` for a pointer like `#/paths/~1pets/get/responses/400`, if found. */
export function locate(pointer: string, root = specRoot): string | undefined {
  const parts = pointer
    .replace(/^#\/?/, '')
    .split('/')
    .filter(Boolean)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
  let file = root;
  let node = parse(file).root;
  let found: { file: string; node: Node } | undefined;
  const follow = () => {
    // A node that is only a `$ref` to another file (with an optional #/pointer) continues there.
    for (let hops = 0; hops < 10; hops++) {
      const ref = child(node, '$ref');
      if (!isScalar(ref) || typeof ref.value !== 'string' || ref.value.startsWith('#')) return;
      const [path = '', fragment = ''] = ref.value.split('#');
      file = join(dirname(file), path);
      node = parse(file).root;
      for (const part of fragment.split('/').filter(Boolean)) node = child(node, part);
    }
  };
  // Components the bundler made from files (`#/components/schemas/Pet`) live in their own file, by the
  // folder's naming rule (`components/schemas/Pet.yaml`).
  const [first, type, name] = parts;
  if (first === 'components' && type && name && !child(child(child(node, first), type), name)) {
    file = join(dirname(root), 'components', type, `${name}.yaml`);
    node = parse(file).root;
    if (node) found = { file, node };
    parts.splice(0, 3);
  }
  for (const part of parts) {
    follow();
    const next = child(node, part);
    if (!next) break;
    node = next;
    found = { file, node };
  }
  if (!found?.node.range) return undefined;
  if (found.node === parse(found.file).root) return `${relative(repoRoot, found.file)}:1`;
  const { line } = parse(found.file).lines.linePos(found.node.range[0]);
  return `${relative(repoRoot, found.file)}:${line}`;
}
