// Generates the committed files under src/generated/ from the contracts in openapi/ and admin/:
// - openapi.ts and admin.ts: TypeScript types, by openapi-typescript (each API's output is declared in
//   redocly.yaml under x-openapi-ts);
// - contract.ts: the facts that code needs as values (version, servers, getPet's sunset, error codes,
//   statuses, the request body limit, the page size bounds);
// - admin-contract.ts: the admin contract's bounds that a form checks before sending (the console's
//   fields: a label's, a customer's, a search's and an audit actor's length, the limits, a rotation's grace,
//   a key id's form).
// With --check (and always when CI is set) nothing is written: it fails if a committed file is stale,
// so a spec change without regenerated files cannot land.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { parse } from 'yaml';
import { adminSpecRoot, bundleObject, specRoot as root, specDir } from './shared.js';

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

// The admin contract's bounds, each read where the contract states it (a missing one fails the generation).
type Bounds = {
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
};
type AdminParameter = { name: string; in: string; schema: Bounds };
const admin = bundleObject<{
  paths: Record<string, Record<string, { operationId?: string; parameters?: AdminParameter[] }>>;
  components: { schemas: Record<string, Bounds & { properties?: Record<string, Bounds> }> };
}>(adminSpecRoot);
const adminSchema = (name: string) => {
  const schema = admin.components.schemas[name];
  if (!schema) throw new Error(`admin contract: no schema ${name}`);
  return schema;
};
const adminProperty = (schema: string, name: string) => {
  const property = adminSchema(schema).properties?.[name];
  if (!property) throw new Error(`admin contract: no ${schema}.${name}`);
  return property;
};
const adminQuery = (operationId: string, name: string) => {
  const operation = Object.values(admin.paths)
    .flatMap((item) => Object.values(item))
    .find((op) => op.operationId === operationId);
  const parameter = operation?.parameters?.find((p) => p.name === name && p.in === 'query');
  if (!parameter) throw new Error(`admin contract: no query parameter ${name} of ${operationId}`);
  return parameter.schema;
};
const pick = ({ minimum, maximum, minLength, maxLength }: Bounds) => ({
  minimum,
  maximum,
  minLength,
  maxLength,
});
const keyIdPattern = adminQuery('listAuditEvents', 'keyId').pattern ?? '';
const adminContract = {
  adminLimits: {
    label: pick(adminSchema('Label')),
    customerId: pick(adminSchema('CustomerId')),
    perMinute: pick(adminProperty('Limits', 'perMinute')),
    perDay: pick(adminProperty('Limits', 'perDay')),
    gracePeriodSeconds: pick(adminProperty('Rotation', 'gracePeriodSeconds')),
    search: pick(adminQuery('listKeys', 'q')),
    auditActor: pick(adminQuery('listAuditEvents', 'actor')),
    keyId: { pattern: keyIdPattern, length: Number(/\{(\d+)\}/.exec(keyIdPattern)?.[1]) },
  },
};
const adminBody = Object.entries(adminContract)
  .map(([name, value]) => `export const ${name} = ${JSON.stringify(value, null, 2)} as const;\n`)
  .join('\n');
emit(here('src/generated/admin-contract.ts'), `${header.replace('openapi/', 'admin/')}\n${adminBody}`);
