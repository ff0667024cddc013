// What the public API promises to TypeScript users (checked by vitest's typecheck, never run).
import { describe, expectTypeOf, it } from 'vitest';
import { type ApiError, type ConnectionError, createClient, type ListPetsQuery, type Pet } from './index.js';

const client = createClient({ baseUrl: 'http://127.0.0.1:3000/v1', apiKey: 'as_x' });

describe('@animal-store/client types', () => {
  it('listPets takes the contract query: id (an array), status, limit, cursor', () => {
    expectTypeOf(client.listPets).toBeCallableWith({ id: [1, 7] });
    expectTypeOf(client.listPets).toBeCallableWith({ status: 'sold', limit: 50 });
    expectTypeOf(client.listPets).returns.resolves.toEqualTypeOf<Pet[]>();
    expectTypeOf<ListPetsQuery['id']>().toEqualTypeOf<number[] | undefined>();
    // @ts-expect-error: status is one of the contract's PetStatus values
    client.listPets({ status: 'lost' });
    // @ts-expect-error: id is an array of ids
    client.listPets({ id: 7 });
  });

  it('createPet takes a NewPet and per-call options, and returns the Pet', () => {
    expectTypeOf(client.createPet).toBeCallableWith(
      { name: 'Rex', categoryId: 1 },
      { idempotencyKey: 'k', timeout: 5_000 },
    );
    expectTypeOf(client.createPet).returns.resolves.toEqualTypeOf<Pet>();
    // @ts-expect-error: the service assigns the id
    client.createPet({ id: 1, name: 'Rex', categoryId: 1 });
  });

  it('errors are typed', () => {
    expectTypeOf<ApiError['code']>().toExtend<string>();
    expectTypeOf<ApiError['retryAfter']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<ConnectionError['reason']>().toEqualTypeOf<'network' | 'timeout' | 'aborted'>();
  });
});
