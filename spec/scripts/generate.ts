// Generates the committed files under src/generated/ from the contracts in openapi/ and admin/:
// - openapi.ts and admin.ts: TypeScript types, by openapi-typescript (each API's output is declared in
//   redocly.yaml under x-openapi-ts);
// - contract.ts: the facts that code needs as values (version, servers, getPet's sunset, error codes,
//   statuses, the request body limit, the page size bounds).
// With --check (and always when CI is set) nothing is written: it fails if a committed file is stale,
// so a spec change without regenerated files cannot land.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { parse } from 'yaml';
import { bundleObject, specRoot as root, specDir } from './shared.js';

const here = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const { values: args } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
const check = args.check || Boolean(process.env.CI);
const header = '// Generated from openapi/ by scripts/generate.ts. Do not edit: run `pnpm generate`.\n';

if (check) {
  process.stdout.write(
    `generate: ${process.env.CI ? 'CI is set, so ' : ''}checking only: nothing is written; stale files fail.\n`,
  );
}

/** Writes `text` to `file`, or with --check only compares them: a stale file fails. */
function emit(file: string, text: string): void {
  if (!check) writeFileSync(file, text);
  else if (readFileSync(file, 'utf8') !== text) {
    process.stderr.write(`${file} is stale: run \`pnpm generate\` and commit the result.\n`);
    process.exit(1);
  }
}

// Each API of redocly.yaml, one after the other: openapi-typescript's own CLI generates them all at once,
// and then fails to resolve the public contract's relative $refs.
type RedoclyApis = Record<string, { root: string; 'x-openapi-ts': { output: string } }>;
const { apis } = parse(readFileSync(join(specDir, 'redocly.yaml'), 'utf8')) as { apis: RedoclyApis };
for (const [name, api] of Object.entries(apis)) {
  const types = astToString(await openapiTS(pathToFileURL(join(specDir, api.root)), { silent: true }));
  emit(join(specDir, api['x-openapi-ts'].output), `${COMMENT_HEADER}${types}`);
  process.stdout.write(`openapi-typescript: ${name} → ${api['x-openapi-ts'].output}\n`);
}

type Operation = { operationId: string; deprecated?: boolean; [extension: `x-${string}`]: unknown };
const api = bundleObject<{
  'x-request-body-limit': number;
  info: { version: string };
  servers: { url: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<
      string,
      {
        properties?: Record<string, { enum?: string[]; 'x-status-of-code'?: Record<string, number> }>;
        enum?: string[];
      }
    >;
    parameters: Record<string, { schema: { default?: number; minimum?: number; maximum?: number } }>;
  };
}>(root);
const server = (description: string) => {
  const found = api.servers.find((s) => s.description === description);
  if (!found) throw new Error(`servers: no ${description} server`);
  return found.url;
};
const pathOf = (operationId: unknown) =>
  Object.entries(api.paths).find(([, item]) =>
    Object.values(item).some((op) => op.operationId === operationId),
  )?.[0];
const deprecated = Object.entries(api.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([, op]) => op.deprecated)
    .map(([method, op]) => ({
      operationId: op.operationId,
      method: method.toUpperCase(),
      path,
      deprecatedAt: String(op['x-deprecated-at']),
      sunset: String(op['x-sunset']),
      replacement: {
        operationId: String(op['x-replacement']),
        path: pathOf(op['x-replacement']),
        target: String(op['x-replacement-target'] ?? pathOf(op['x-replacement'])),
      },
    })),
);
const contract = {
  interfaceVersion: api.info.version,
  servers: { production: server('Production'), staging: server('Staging') },
  deprecatedOperations: deprecated,
  errorCodes: api.components.schemas.Error?.properties?.code?.enum ?? [],
  errorStatuses: api.components.schemas.Error?.properties?.code?.['x-status-of-code'] ?? {},
  petStatuses: api.components.schemas.PetStatus?.enum ?? [],
  requestBodyLimit: api['x-request-body-limit'],
  pageSize: {
    default: api.components.parameters.Limit?.schema.default,
    minimum: api.components.parameters.Limit?.schema.minimum,
    maximum: api.components.parameters.Limit?.schema.maximum,
  },
};
const body = Object.entries(contract)
  .map(([name, value]) => `export const ${name} = ${JSON.stringify(value, null, 2)} as const;\n`)
  .join('\n');
emit(here('src/generated/contract.ts'), `${header}\n${body}`);
