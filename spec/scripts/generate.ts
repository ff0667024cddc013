// Generates the committed files under src/generated/ from the contract in openapi/:
// - openapi.ts: TypeScript types, by openapi-typescript;
// - contract.ts: the facts that code needs as values (version, servers, getPet's sunset, error codes,
//   statuses, the request body limit, the page size bounds).
// With --check (and always when CI is set) nothing is written: it fails if a committed file is stale,
// so a spec change without regenerated files cannot land.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
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
// The API, its root and the output file are declared in redocly.yaml (apis: animal-store@v1).
execFileSync('openapi-typescript', check ? ['--check'] : [], { stdio: 'inherit', cwd: specDir });

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
const file = here('src/generated/contract.ts');
const text = `${header}\n${body}`;
if (check) {
  if (readFileSync(file, 'utf8') !== text) {
    process.stderr.write(`${file} is stale: run \`pnpm generate\` and commit the result.\n`);
    process.exit(1);
  }
} else {
  writeFileSync(file, text);
}
