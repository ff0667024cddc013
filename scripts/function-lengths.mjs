// The house's rule on function size (docs/architecture.md): no function over 80 of its own lines (its
// lines less those of the functions inside it), and at most 12 over 60, in the code every package ships or
// runs (tests and generated files aside). Read with the TypeScript compiler's parser; exits 1 naming each
// function past the rule. Written by hand: docs/decisions.md#function-lengths
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const longest = 80;
const long = 60;
const mostLong = 12;
const roots = ['apps/server/src', 'apps/server/bin', 'apps/console/src', 'packages', 'tools', 'spec/src'];
const skipped = /(^|\/)(node_modules|dist|generated|test|test-slow)(\/|$)|\.test(-d)?\.tsx?$|\.d\.ts$/;

const files = roots.flatMap((root) =>
  readdirSync(root, { recursive: true })
    .map((name) => join(root, String(name)))
    .filter((path) => /\.(tsx?|mjs)$/.test(path) && !skipped.test(path)),
);

const isFunction = (node) =>
  ts.isFunctionDeclaration(node) ||
  ts.isFunctionExpression(node) ||
  ts.isArrowFunction(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isGetAccessor(node) ||
  ts.isSetAccessor(node);

/** Each function of a file with its own lines, named as a reader finds it. */
function functionsOf(path) {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const lineOf = (position) => source.getLineAndCharacterOfPosition(position).line;
  const found = [];
  const visit = (node, outer) => {
    if (!isFunction(node)) return ts.forEachChild(node, (child) => visit(child, outer));
    const lines = lineOf(node.getEnd()) - lineOf(node.getStart()) + 1;
    const parent = node.parent;
    const name =
      node.name?.getText() ??
      (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)
        ? parent.name.getText()
        : 'a function');
    const entry = { where: `${path}:${lineOf(node.getStart()) + 1}`, name, own: lines };
    if (outer) outer.own -= lines;
    found.push(entry);
    ts.forEachChild(node, (child) => visit(child, entry));
  };
  visit(source, undefined);
  return found;
}

const all = files.flatMap(functionsOf);
const over = all.filter((f) => f.own > longest);
const longOnes = all.filter((f) => f.own > long);
const problems = over.map((f) => `${f.where} ${f.name}: ${f.own} own lines (at most ${longest})\n`);
if (longOnes.length > mostLong) {
  problems.push(`${longOnes.length} functions over ${long} own lines (at most ${mostLong}):\n`);
  for (const f of longOnes) problems.push(`  ${f.where} ${f.name}: ${f.own}\n`);
}
if (problems.length > 0) {
  process.stderr.write(problems.join(''));
  process.exit(1);
}
process.stdout.write(
  `function sizes: ${all.length} functions, none over ${longest} own lines, ${longOnes.length} over ${long}\n`,
);
