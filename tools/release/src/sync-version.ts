// Part of `pnpm version-packages`: after Changesets bumps the fixed group, the contract's info.version
// follows the spec package's version (edited as YAML, comments kept), and the generated files follow the
// contract.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { specDir, specRoot } from './repo.js';

const { version } = JSON.parse(readFileSync(join(specDir, 'package.json'), 'utf8')) as { version: string };
const document = parseDocument(readFileSync(specRoot, 'utf8'));
if (!document.hasIn(['info', 'version'])) throw new Error('info.version not found in openapi.yaml');
document.setIn(['info', 'version'], version);
writeFileSync(specRoot, document.toString({ lineWidth: 0 }));
process.stdout.write(`openapi.yaml info.version = ${version}\n`);
