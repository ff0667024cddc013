// Every property of the contract's NewPet round-trips through every engine (this suite is in httpSuites):
// created with a value for each (not the defaults), then read back by getPet, listPets, the id filter and an
// idempotent replay of the create. A property the contract gains fails here until every engine stores it
// (store/rows.ts pairs the properties with their columns; CONTRIBUTING.md, "Adding a field").
import { readFileSync } from 'node:fs';
import { bundledSpecPath } from '@animal-store/spec/files';
import { describe, expect, it } from 'vitest';
import { backend } from '../support/backends.js';
import { call, type TestServer, withServer } from '../support/harness.js';
import { type Schema, valueFor } from '../support/sample-values.js';

const contract = JSON.parse(readFileSync(bundledSpecPath, 'utf8')) as {
  components: { schemas: Record<string, Schema> };
};
const resolve = (schema: Schema): Schema =>
  schema.$ref
    ? resolve(contract.components.schemas[schema.$ref.split('/').pop() as string] as Schema)
    : schema;

const newPet = resolve(contract.components.schemas.NewPet as Schema);
const sent = Object.fromEntries(
  Object.entries(newPet.properties ?? {}).map(([name, schema]) => [name, valueFor(name, schema, resolve)]),
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
    // A refused value is named by the answer's message (the validator names body.<field>).
    expect({
      status: created.status,
      body: created.status === 201 ? 'created' : await created.clone().text(),
    }).toEqual({
      status: 201,
      body: 'created',
    });
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
