// Generates the committed files under src/generated/ from the contract in openapi/:
// - openapi.ts: TypeScript types, by openapi-typescript;
// - contract.ts: the facts that code needs as values (version, servers, getPet's sunset, error codes).
// With --check (and always when CI is set) nothing is written: it fails if a committed file is stale,
// so a spec change without regenerated files cannot land.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleObject, specRoot as root } from './shared.js';

const here = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));
const check = process.argv.includes('--check') || Boolean(process.env.CI);
const header = '// Generated from openapi/ by scripts/generate.ts. Do not edit: run `pnpm generate`.\n';

execFileSync(
  'openapi-typescript',
  [root, '-o', here('src/generated/openapi.ts'), ...(check ? ['--check'] : [])],
  { stdio: 'inherit' },
);

type Operation = { operationId: string; deprecated?: boolean; [extension: `x-${string}`]: unknown };
const api = bundleObject<{
  info: { version: string };
  servers: { url: string; description: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, { properties?: Record<string, { enum?: string[] }>; enum?: string[] }>;
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
      replacement: { operationId: String(op['x-replacement']), path: pathOf(op['x-replacement']) },
    })),
);
const contract = {
  interfaceVersion: api.info.version,
  servers: { production: server('Production'), staging: server('Staging') },
  deprecatedOperations: deprecated,
  errorCodes: api.components.schemas.Error?.properties?.code?.enum ?? [],
  petStatuses: api.components.schemas.PetStatus?.enum ?? [],
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
