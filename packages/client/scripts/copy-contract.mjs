// Copies the contract's TypeScript (spec/src: the types generated from the contract and the facts code needs
// as values) into src/generated/spec/, so that the published client stands alone: an app installs it and
// openapi-fetch, nothing else. It is this package's `generate` task, which turbo runs once before build and
// type-check (never twice at once: two copies racing in one folder failed CI); the copy is not committed
// (it is git-ignored), so it can never drift from the contract.
import { cpSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const from = fileURLToPath(new URL('../node_modules/@animal-store/spec/src/', import.meta.url));
const to = fileURLToPath(new URL('../src/generated/spec/', import.meta.url));
rmSync(to, { recursive: true, force: true });
cpSync(from, to, { recursive: true, filter: (path) => !path.endsWith('files.ts') }); // files.ts: Node paths
