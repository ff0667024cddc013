// Every property of the contract's NewPet round-trips through every engine (this suite is in httpSuites):
// created with a value for each (not the defaults), then read back by getPet, listPets, the id filter and an
// idempotent replay of the create. A property the contract gains fails here until every engine stores it
// (store/rows.ts pairs the properties with their columns; CONTRIBUTING.md, "Adding a field").
import { readFileSync } from 'node:fs';
import { bundledSpecPath } from '@animal-store/spec/files';
import { describe, expect, it } from 'vitest';
import { backend } from '../support/backends.js';
import { call, type TestServer, withServer } from '../support/harness.js';

type Schema = {
  type?: string;
  enum?: unknown[];
  examples?: unknown[];
  minimum?: number;
  pattern?: string;
  items?: Schema;
  $ref?: string;
  properties?: Record<string, Schema>;
  default?: unknown;
};
const contract = JSON.parse(readFileSync(bundledSpecPath, 'utf8')) as {
  components: { schemas: Record<string, Schema> };
};
const resolve = (schema: Schema): Schema =>
  schema.$ref
    ? resolve(contract.components.schemas[schema.$ref.split('/').pop() as string] as Schema)
    : schema;

/** A value for a property, other than its default where it has one: so that a dropped field cannot pass. */
function valueFor(schema: Schema): unknown {
  const own = resolve(schema);
  if (own.enum) return own.enum.find((value) => value !== own.default) ?? own.enum[0];
  if (own.type === 'integer' || own.type === 'number') return Math.max(own.minimum ?? 0, 0) + 41;
  if (own.type === 'boolean') return own.default !== true;
  if (own.type === 'string') {
    const text = `Round trip ${String(own.examples?.[0] ?? '')}`.trim();
    return own.pattern && !new RegExp(own.pattern, 'u').test(text) ? own.examples?.[0] : text;
  }
  if (own.type === 'array' && own.items) return [valueFor(own.items)];
  throw new Error(`pet-fields.test.ts has no value for a property of type ${own.type}: teach valueFor`);
}

const newPet = resolve(contract.components.schemas.NewPet as Schema);
const sent = Object.fromEntries(
  Object.entries(newPet.properties ?? {}).map(([name, schema]) => [name, valueFor(schema)]),
);

let server: TestServer;
let key: string;
withServer((started, generous) => {
  server = started;
  key = generous;
});

describe(`every property of NewPet round-trips (${backend})`, () => {
  it(`stores and returns ${Object.keys(sent).join(', ')} on every read and on a replay`, async () => {
    expect(Object.keys(sent).length).toBeGreaterThanOrEqual(3);
    const create = () =>
      call(`${server.url}/v1/pets`, key, {
        method: 'POST',
        headers: { 'Idempotency-Key': 'round-trip-1' },
        body: JSON.stringify(sent),
      });
    const created = await create();
    expect(created.status).toBe(201);
    const pet = (await created.json()) as Record<string, unknown>;
    expect(pet).toMatchObject(sent);
    const reads = [
      await (await call(`${server.url}/v1/pets/${pet.id}`, key)).json(),
      ((await (await call(`${server.url}/v1/pets?id=${pet.id}`, key)).json()) as unknown[])[0],
      ((await (await call(`${server.url}/v1/pets?limit=100`, key)).json()) as { id: unknown }[]).find(
        (p) => p.id === pet.id,
      ),
    ];
    const replay = await create();
    expect(replay.status).toBe(201); // a replay answers as the create did
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    reads.push(await replay.json());
    for (const read of reads) expect(read).toEqual(pet);
  });
});
