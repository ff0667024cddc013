// @animal-store/client: a typed client for the Animal Store API over openapi-fetch and the types generated
// from the contract. Works wherever `fetch` does (Node.js 22+, browsers).

import createFetchClient from 'openapi-fetch';
import { type CallOptions, call, dataOf, fail } from './calls.js';
import { type RateLimitState, rateLimitOf, retryAfterSeconds } from './errors.js';
import {
  deprecatedOperations,
  type NewPet,
  type operations,
  type Pet,
  type paths,
  servers,
} from './generated/spec/index.js';
import { defaultRetry, type RetryOptions, retryingFetch } from './retry.js';
import { traced } from './tracing.js';

export type { CallOptions } from './calls.js';
export {
  AnimalStoreError,
  ApiError,
  type ApiErrorOptions,
  ConnectionError,
  type RateLimitState,
} from './errors.js';
export type { NewPet, Pet, PetStatus } from './generated/spec/index.js';
export type { RetryEvent, RetryOptions, RetryReason } from './retry.js';

/** The production base URL from the contract (ends in /v1). */
export const productionBaseUrl: string = servers.production;
/** The staging base URL from the contract (ends in /v1). */
export const stagingBaseUrl: string = servers.staging;

/** What the service said about a deprecated operation, from its Deprecation/Sunset/Link headers. */
export type DeprecationNotice = {
  operation: string;
  /** When it was deprecated (RFC 9745 `@<seconds>`), or `true` for the older draft form. */
  deprecation: Date | true;
  sunset?: Date;
  successor?: string;
};

export type ClientOptions = {
  /** e.g. `productionBaseUrl`, `stagingBaseUrl` or `http://127.0.0.1:3000/v1`. */
  baseUrl: string;
  apiKey: string;
  /** Retry policy for 429 and GET network errors; see RetryOptions for the defaults. */
  retry?: Partial<RetryOptions>;
  /** Called once per deprecated operation, the first time a response announces it (default: console.warn). */
  onDeprecation?: (notice: DeprecationNotice) => void;
  /** The fetch to use (default: globalThis.fetch). */
  fetch?: (request: Request) => Promise<Response>;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
};

/** The query of listPets, as the contract defines it (`id`, `status`, `limit`, `cursor`). */
export type ListPetsQuery = NonNullable<operations['listPets']['parameters']['query']>;

/** createPet's options: the Idempotency-Key (generated when absent) makes its retries safe. */
export type CreateOptions = CallOptions & { idempotencyKey?: string };

const warn = (notice: DeprecationNotice) => {
  const sunset = notice.sunset ? ` and will be removed on ${notice.sunset.toISOString().slice(0, 10)}` : '';
  // biome-ignore lint/suspicious/noConsole: the default, replaceable deprecation warning of a library
  console.warn(`[animal-store] ${notice.operation} is deprecated${sunset}.`);
};

function deprecationOf(operation: string, headers: Headers): DeprecationNotice | undefined {
  const value = headers.get('deprecation');
  const sunset = headers.get('sunset');
  if (value === null && sunset === null) return undefined;
  const at = /^@(-?\d+)$/.exec(value?.trim() ?? '');
  const successor = /<([^>]+)>\s*;\s*rel="?successor-version"?/.exec(headers.get('link') ?? '')?.[1];
  return {
    operation,
    deprecation: at ? new Date(Number(at[1]) * 1000) : true,
    ...(sunset !== null && { sunset: new Date(sunset) }),
    ...(successor !== undefined && { successor }),
  };
}

/** The `cursor` of the `rel="next"` link, when there is a next page. */
const nextCursor = (headers: Headers) => {
  const target = /<([^>]+)>\s*;\s*rel="?next"?/.exec(headers.get('link') ?? '')?.[1];
  return target
    ? (new URL(target, 'http://base.invalid').searchParams.get('cursor') ?? undefined)
    : undefined;
};

export function createClient(options: ClientOptions) {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const onDeprecation = options.onDeprecation ?? warn;
  const warned = new Set<string>();
  let rateLimit: RateLimitState | undefined;

  const observed = async (request: Request) => {
    const response = await send(request);
    rateLimit = rateLimitOf(response.headers) ?? rateLimit;
    return response;
  };
  const api = createFetchClient<paths>({
    baseUrl: options.baseUrl,
    headers: { ...options.headers, Authorization: `Bearer ${options.apiKey}` },
    fetch: traced(observed, (attempt) =>
      retryingFetch(
        attempt,
        { ...defaultRetry, ...options.retry },
        (r) => (retryAfterSeconds(r.headers) ?? 0) * 1000,
      ),
    ),
  });

  function notice(operation: string, response: Response) {
    if (warned.has(operation)) return;
    const found = deprecationOf(operation, response.headers);
    if (!found) return;
    warned.add(operation);
    onDeprecation(found);
  }

  async function listPetsPage(
    query: ListPetsQuery = {},
    options?: CallOptions,
  ): Promise<{ pets: Pet[]; nextCursor?: string }> {
    return call(options, async (signal) => {
      const { data, error, response } = await api.GET('/pets', {
        params: { query },
        ...(signal && { signal }),
      });
      if (data === undefined) fail(response, error);
      const cursor = nextCursor(response.headers);
      return { pets: data, ...(cursor !== undefined && { nextCursor: cursor }) };
    });
  }

  return {
    /**
     * Up to `limit` animals (1-100, default 20) in ascending id order, optionally of one status; or, with
     * `id` (1 to 100 ids), exactly those animals that exist.
     */
    async listPets(query: ListPetsQuery = {}, options?: CallOptions): Promise<Pet[]> {
      return (await listPetsPage(query, options)).pets;
    },
    /** One page plus the cursor of the next one (absent on the last page). */
    listPetsPage,
    /** Every animal (of one status), following the service's `rel="next"` links page by page. */
    async *listAllPets(
      query: Omit<ListPetsQuery, 'cursor' | 'id'> = {},
      options?: CallOptions,
    ): AsyncGenerator<Pet> {
      let cursor: string | undefined;
      do {
        const page = await listPetsPage({ ...query, ...(cursor !== undefined && { cursor }) }, options);
        yield* page.pets;
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    },
    /**
     * Adds an animal; `status` defaults to `available`. Returns it with its assigned id. Every call sends an
     * Idempotency-Key (yours, or a new UUID), the same on each retry, so that a retry after a lost answer
     * or a 5xx never adds the animal twice.
     */
    async createPet(pet: NewPet, options: CreateOptions = {}): Promise<Pet> {
      const idempotencyKey = options.idempotencyKey ?? globalThis.crypto.randomUUID();
      return dataOf(options, (init) =>
        api.POST('/pets', { body: pet, params: { header: { 'Idempotency-Key': idempotencyKey } }, ...init }),
      );
    },
    /**
     * Fetches one animal by id.
     * @deprecated Since 1.0.0; removed on 2030-12-05, after which the service answers 410 Gone.
     * Use {@link listPets} with `{ id: [petId] }` instead (its successor, since 1.1.0).
     */
    async getPet(petId: number, options?: CallOptions): Promise<Pet> {
      return call(options, async (signal) => {
        const { data, error, response } = await api.GET('/pets/{petId}', {
          params: { path: { petId } },
          ...(signal && { signal }),
        });
        notice('getPet', response);
        if (data === undefined) fail(response, error);
        return data;
      });
    },
    /** The rate-limit state of the last response received, if it carried one. */
    get rateLimit(): RateLimitState | undefined {
      return rateLimit;
    },
  };
}

export type AnimalStoreClient = ReturnType<typeof createClient>;

/** The contract's record of getPet's removal (its TSDoc above must say the same; a test checks it). */
export const getPetSunset: string =
  deprecatedOperations.find((op) => op.operationId === 'getPet')?.sunset ?? '';
