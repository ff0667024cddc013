// Part of `pnpm version-packages`: after Changesets bumps the fixed group, the contract's info.version
// follows the spec package's version, and the generated files follow the contract.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { specDir, specRoot } from './shared.js';

const { version } = JSON.parse(readFileSync(join(specDir, 'package.json'), 'utf8')) as { version: string };
const text = readFileSync(specRoot, 'utf8');
const updated = text.replace(/^(info:\n(?: {2}.*\n)*? {2}version: ).*$/m, `$1${version}`);
if (updated === text && !text.includes(`  version: ${version}`))
  throw new Error('info.version not found in openapi.yaml');
writeFileSync(specRoot, updated);
process.stdout.write(`openapi.yaml info.version = ${version}\n`);
