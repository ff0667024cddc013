import { describe, expect, it } from 'vitest';
import { type Schema, valueFor } from './sample-values.js';

const as = (schema: Schema) => schema;

describe('valueFor (the round trip of every NewPet property)', () => {
  it.each<[string, Schema, unknown]>([
    ['a date', { type: 'string', format: 'date' }, '2019-04-02'],
    ['a date-time', { type: 'string', format: 'date-time' }, '2019-04-02T10:20:30.000Z'],
    ['an unknown format with an example', { type: 'string', format: 'x-slug', examples: ['rex'] }, 'rex'],
    ['a plain string', { type: 'string', examples: ['Rex'] }, 'Round trip Rex'],
    ['an enum, not its default', { type: 'string', enum: ['a', 'b'], default: 'a' }, 'b'],
    ['an array of dates', { type: 'array', items: { type: 'string', format: 'date' } }, ['2019-04-02']],
  ])('makes %s', (_, schema, value) => {
    expect(valueFor('field', schema, as)).toEqual(value);
  });

  it('names the property and what it lacks when it cannot make a value', () => {
    expect(() => valueFor('birthDate', { type: 'string', format: 'x-slug' }, as)).toThrow(
      /no value for birthDate: a string of format x-slug without examples/,
    );
    expect(() => valueFor('shape', { type: 'object' }, as)).toThrow(
      /no value for shape: a property of type object/,
    );
  });
});
