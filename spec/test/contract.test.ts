import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { bundledAdminSpecPath, bundledSpecPath } from '../src/files.js';
import { deprecatedOperations, servers } from '../src/index.js';

type Schema = {
  $ref?: string;
  properties?: Record<string, unknown>;
  examples?: unknown[];
  required?: string[];
};
type Response = {
  $ref?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: Schema; example?: unknown }>;
};
type Operation = {
  operationId: string;
  deprecated?: boolean;
  'x-sunset'?: string;
  responses: Record<string, Response>;
};
const api = JSON.parse(readFileSync(bundledSpecPath, 'utf8')) as {
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; responses: Record<string, Response> };
};
const resolve = (response: Response): Response =>
  response.$ref ? (api.components.responses[response.$ref.split('/').pop() as string] as Response) : response;
const operations = Object.entries(api.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })),
);
const responses = operations.flatMap(({ name, op }) =>
  Object.entries(op.responses).map(([status, response]) => ({
    name: `${name} ${status}`,
    status,
    response: resolve(response),
  })),
);

describe('the bundled contract', () => {
  it('declares the three operations of the seed', () => {
    expect(operations.map(({ op }) => op.operationId).sort()).toEqual(['createPet', 'getPet', 'listPets']);
  });

  it.each(operations)('$name declares 401 and 429 with the Error schema', ({ op }) => {
    for (const status of ['401', '429']) {
      const response = resolve(op.responses[status] as Response);
      expect(response.content?.['application/json']?.schema?.$ref).toBe('#/components/schemas/Error');
    }
  });

  it.each(responses)('$name has a JSON example', ({ response }) => {
    expect(response.content?.['application/json']?.example).toBeDefined();
  });

  it.each(Object.entries(api.components.schemas))('schema %s has an example', (_, schema) => {
    expect(schema.examples?.length).toBeGreaterThan(0);
  });

  it('marks getPet deprecated, removed on 2030-12-05', () => {
    const getPet = api.paths['/pets/{petId}']?.get as Operation;
    expect(getPet.deprecated).toBe(true);
    expect(getPet['x-sunset']).toBe('2030-12-05T00:00:00Z');
    expect(deprecatedOperations).toEqual([
      expect.objectContaining({ operationId: 'getPet', sunset: getPet['x-sunset'] }),
    ]);
  });

  it('gives Pet exactly the fields of NewPet plus id', () => {
    const { Pet, NewPet } = api.components.schemas as Record<string, Schema>;
    expect(Object.keys(Pet?.properties ?? {}).sort()).toEqual(
      [...Object.keys(NewPet?.properties ?? {}), 'id'].sort(),
    );
    expect(Pet?.required?.sort()).toEqual([...(NewPet?.required ?? []), 'id'].sort());
  });

  it('serves production and staging under /v1', () => {
    expect(api.servers.map((s) => s.url)).toEqual([servers.production, servers.staging]);
    for (const { url } of api.servers) expect(url).toMatch(/\/v1$/);
  });
});

describe('pnpm lint', () => {
  const run = promisify(execFile);
  const specDir = fileURLToPath(new URL('..', import.meta.url));

  it('when an example violates its schema, then the lint fails', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'broken-spec-'));
    try {
      cpSync(join(specDir, 'openapi'), join(copy, 'openapi'), { recursive: true });
      cpSync(join(specDir, 'redocly.yaml'), join(copy, 'redocly.yaml'));
      const pet = join(copy, 'openapi/components/schemas/Pet.yaml');
      writeFileSync(pet, readFileSync(pet, 'utf8').replace('  - id: 42\n', '  - id: forty-two\n'));
      await expect(run('redocly', ['lint', 'openapi/openapi.yaml'], { cwd: copy })).rejects.toMatchObject({
        stdout: expect.stringContaining('no-invalid-schema-examples'),
      });
      await expect(run('redocly', ['lint', 'openapi/openapi.yaml'], { cwd: specDir })).resolves.toBeDefined();
    } finally {
      rmSync(copy, { recursive: true });
    }
  });
});

describe('the admin contract', () => {
  type ErrorSchema = {
    properties: { code: { enum: string[]; 'x-status-of-code'?: Record<string, number> } };
    examples: unknown[];
  };
  type Response = {
    content?: {
      'application/json'?: { schema?: { $ref?: string }; example?: { code: string; status: number } };
    };
  };
  const admin = JSON.parse(readFileSync(bundledAdminSpecPath, 'utf8')) as {
    components: { schemas: Record<string, ErrorSchema>; responses: Record<string, Response> };
  };
  const publicError = (api as unknown as { components: { schemas: { Error: ErrorSchema } } }).components
    .schemas.Error;
  const adminError = admin.components.schemas.Error as ErrorSchema;

  it("names no fictional production server: its one server is docs/keys.md's local admin listener", () => {
    const { servers: adminServers } = JSON.parse(readFileSync(bundledAdminSpecPath, 'utf8')) as {
      servers: { url: string }[];
    };
    expect(adminServers.map((s) => s.url)).toEqual(['http://127.0.0.1:3001/admin/v1']);
    const keys = readFileSync(fileURLToPath(new URL('../../docs/keys.md', import.meta.url)), 'utf8');
    expect(keys).toContain('ADMIN_PORT=3001');
  });

  it('has an Error of its own: its codes, each answered with the status the public table gives it', () => {
    const statusOf = publicError.properties.code['x-status-of-code'] ?? {};
    expect(adminError.properties.code.enum.length).toBeGreaterThan(5);
    for (const code of adminError.properties.code.enum) expect(statusOf[code], code).toBeDefined();
    // codes no admin operation answers stay out of it
    for (const code of ['gone', 'temporarily_banned', 'idempotency_in_progress']) {
      expect(adminError.properties.code.enum).not.toContain(code);
    }
  });

  it("every failure response uses it, with an example in the admin API's own words", () => {
    const statusOf = publicError.properties.code['x-status-of-code'] ?? {};
    const failures = Object.entries(admin.components.responses).filter(
      ([, r]) => r.content?.['application/json']?.schema?.$ref === '#/components/schemas/Error',
    );
    expect(failures.length).toBeGreaterThanOrEqual(8);
    for (const [name, response] of failures) {
      const example = response.content?.['application/json']?.example;
      expect(example, name).toBeDefined();
      expect(adminError.properties.code.enum, name).toContain(example?.code);
      expect(statusOf[example?.code as string], name).toBe(example?.status);
      expect(JSON.stringify(example), name).not.toMatch(/API key|animal|pet\b/i);
    }
    expect(JSON.stringify(adminError)).not.toMatch(/API key missing|no animal/);
  });
});
