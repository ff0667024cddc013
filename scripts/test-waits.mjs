// The house's rule on tests and the clock (CONTRIBUTING.md#add-a-test): at most 60 fixed sleeps and 60
// wall-clock assertions in the workspace's tests. A sleep is a promise that resolves after a set time: a call
// of node:timers/promises' setTimeout, or `new Promise((r) => setTimeout(r, ms))`. A test that waits for
// something polls it (expect.poll, vi.waitFor, test/support/waits.ts), which counts as neither. A wall-clock
// assertion is an expect() that reads the clock (Date.now(), performance.now(), process.hrtime), directly or
// through a variable set from it; not under vi.useFakeTimers, nor an instant handed to the code under test. Read with the TypeScript compiler's parser; exits 1 past either bound, naming
// every site. Written by hand: docs/decisions.md#test-waits
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const bounds = { sleeps: 60, 'wall-clock assertions': 60 };
const roots = ['apps', 'packages', 'tools', 'spec'];
const skipped = /(^|\/)(node_modules|dist|generated)(\/|$)|\.d\.ts$/;
const isTest = /(^|\/)(test|test-slow|test-support)\/|\.test(-d)?\.tsx?$/;

const files = roots
  .filter((root) => existsSync(root))
  .flatMap((root) =>
    readdirSync(root, { recursive: true })
      .map((name) => join(root, String(name)))
      .filter((path) => /\.(tsx?|mjs)$/.test(path) && !skipped.test(path) && isTest.test(path)),
  );

const clockRead = /^(Date\.now|performance\.now|process\.hrtime(\.bigint)?)$/;

/** The file's sleeps and wall-clock assertions, each as `path:line`. */
function sitesOf(path) {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const where = (node) => `${path}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const timerNames = new Set();
  const clockNames = new Set();
  const found = { sleeps: [], 'wall-clock assertions': [] };
  // Vitest's fake timers make Date.now() a clock the test moves: not the wall clock.
  const fakeClock = /\bvi\.useFakeTimers\(/.test(source.text);
  // A read of the clock outside a template (a unique name) and outside a function (a clock handed on).
  // In an assertion (`top`), an instant handed to the code under test (an argument of a call other than
  // expect, its matcher or Math's) is an input, not a bound on how long something took.
  const readsClock = (node, top) => {
    if (ts.isTemplateExpression(node) || ts.isArrowFunction(node) || ts.isFunctionExpression(node))
      return false;
    if (ts.isIdentifier(node)) return clockNames.has(node.text);
    if (!ts.isCallExpression(node)) return ts.forEachChild(node, (child) => readsClock(child, top)) ?? false;
    const callee = node.expression.getText();
    if (clockRead.test(callee)) return true;
    const passedOn = top && node !== top && !isMatcher(node) && !/^(expect|Math\.\w+)$/.test(callee);
    const parts = passedOn ? [node.expression] : [node.expression, ...node.arguments];
    return parts.some((part) => readsClock(part, top));
  };
  const collect = (node) => {
    if (
      ts.isImportDeclaration(node) &&
      /^node:timers\/promises$|^timers\/promises$/.test(node.moduleSpecifier.text) &&
      node.importClause?.namedBindings &&
      ts.isNamedImports(node.importClause.namedBindings)
    )
      for (const e of node.importClause.namedBindings.elements)
        if ((e.propertyName ?? e.name).text === 'setTimeout') timerNames.add(e.name.text);
    if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.initializer &&
      readsClock(node.initializer)
    )
      clockNames.add(node.name.text);
    ts.forEachChild(node, collect);
  };
  collect(source);
  const visit = (node) => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
      const callee = node.expression.text;
      if (timerNames.has(callee) || (callee === 'setTimeout' && resolvesPromise(node)))
        found.sleeps.push(where(node));
      const whole = callee === 'expect' && !fakeClock ? assertion(node) : undefined;
      if (whole && readsClock(whole, whole)) found['wall-clock assertions'].push(where(node));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * `setTimeout(r, ms)` inside `new Promise((r) => …)`: a promise resolved by the timer alone; not when it is
 * a bound raced against what the test waits for (`Promise.race([done, new Promise(…)])`).
 */
function resolvesPromise(call) {
  const [first] = call.arguments;
  if (!first || !ts.isIdentifier(first)) return false;
  for (let node = call.parent; node; node = node.parent)
    if (ts.isArrowFunction(node) || ts.isFunctionExpression(node))
      return (
        ts.isNewExpression(node.parent) &&
        node.parent.expression.getText() === 'Promise' &&
        node.parameters[0]?.name.getText() === first.text &&
        !racedIn(node.parent)
      );
  return false;
}

const racedIn = (promise) => {
  const array = promise.parent;
  return (
    ts.isArrayLiteralExpression(array) &&
    ts.isCallExpression(array.parent) &&
    array.parent.expression.getText() === 'Promise.race'
  );
};

/** A matcher of an assertion: `expect(…).toBe(…)`, `expect(…).not.toBe(…)`. */
const isMatcher = (call) =>
  ts.isPropertyAccessExpression(call.expression) && /^expect\(/.test(call.expression.expression.getText());

/** The whole `expect(…).matcher(…)` an expect() call heads. */
function assertion(expectCall) {
  let node = expectCall;
  while (ts.isPropertyAccessExpression(node.parent) || ts.isCallExpression(node.parent)) node = node.parent;
  return node;
}

const totals = { sleeps: [], 'wall-clock assertions': [] };
for (const path of files) {
  const found = sitesOf(path);
  for (const kind of Object.keys(totals)) totals[kind].push(...found[kind]);
}
const verbose = process.argv.includes('--list');
let failed = false;
for (const [kind, sites] of Object.entries(totals)) {
  const over = sites.length > bounds[kind];
  failed ||= over;
  if (over || verbose) process.stderr.write(sites.map((s) => `  ${kind}: ${s}\n`).join(''));
}
const summary = Object.entries(totals)
  .map(([kind, sites]) => `${sites.length} ${kind} (at most ${bounds[kind]})`)
  .join(', ');
process.stdout.write(`tests and the clock: ${summary}\n`);
if (failed) process.exit(1);
