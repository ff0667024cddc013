// A value for each property of a contract schema, other than its default where it has one, so that a field
// an engine drops cannot pass a round trip (every-engine/pet-fields.test.ts). A string with a `format` gets a
// value of that format; a property this cannot make a value for is named, with what it lacks.

export type Schema = {
  type?: string;
  format?: string;
  enum?: unknown[];
  examples?: unknown[];
  minimum?: number;
  pattern?: string;
  items?: Schema;
  $ref?: string;
  properties?: Record<string, Schema>;
  default?: unknown;
};

/** A value of each string format the contract may use (OpenAPI 3.1's JSON Schema formats). */
const formats: Record<string, string> = {
  date: '2019-04-02',
  'date-time': '2019-04-02T10:20:30.000Z',
  time: '10:20:30Z',
  email: 'round.trip@example.com',
  uri: 'https://example.com/round-trip',
  uuid: '3f2b8f0e-4c1d-4e5a-9b7c-2d6e8f1a0b3c',
};

/** A value for property `name` (its schema's `$ref`s followed by `resolve`). */
export function valueFor(name: string, schema: Schema, resolve: (s: Schema) => Schema): unknown {
  const own = resolve(schema);
  if (own.enum) return own.enum.find((value) => value !== own.default) ?? own.enum[0];
  if (own.type === 'integer' || own.type === 'number') return Math.max(own.minimum ?? 0, 0) + 41;
  if (own.type === 'boolean') return own.default !== true;
  if (own.type === 'string' && own.format) {
    const value = formats[own.format] ?? own.examples?.[0];
    if (value === undefined)
      throw new Error(
        `no value for ${name}: a string of format ${own.format} without examples (give it one, or teach sample-values.ts the format)`,
      );
    return value;
  }
  if (own.type === 'string') {
    const text = `Round trip ${String(own.examples?.[0] ?? '')}`.trim();
    return own.pattern && !new RegExp(own.pattern, 'u').test(text) ? own.examples?.[0] : text;
  }
  if (own.type === 'array' && own.items) return [valueFor(`${name}[]`, own.items, resolve)];
  throw new Error(`no value for ${name}: a property of type ${own.type} (teach sample-values.ts)`);
}
