// @animal-store/client/admin: a typed client for the Animal Store admin API (keys, plans, usage) over
// openapi-fetch and the types generated from the admin contract, with the same retries (429 always; network
// errors and 502/503/504 for GET and for a create with its Idempotency-Key) and the same errors (ApiError,
// ConnectionError) as the API's client. In this package, behind its own entry point, so that an app that
// only calls the API never loads it.
import createFetchClient from 'openapi-fetch';
import { type CallOptions, call, dataOf, fail } from './calls.js';
import { retryAfterSeconds } from './errors.js';
import type {
  AdminKey,
  AdminKeyPage,
  AdminKeyUpdate,
  AuditPage,
  KeyUsage,
  NewAdminKey,
  operations,
  paths,
  RotatedAdminKey,
} from './generated/spec/admin.js';
import { defaultRetry, type RetryOptions, retryingFetch } from './retry.js';
import { traced } from './tracing.js';

export type { CallOptions } from './calls.js';
export { ApiError, type ApiErrorOptions, ConnectionError } from './errors.js';
export type {
  AdminKey,
  AdminKeyPage,
  AdminKeyUpdate,
  AuditEvent,
  AuditPage,
  DayUsage,
  KeyUsage,
  NewAdminKey,
  RotatedAdminKey,
} from './generated/spec/admin.js';
/** The admin contract's bounds, as values (a label's length, the limits, a grace…), for forms. */
export { adminLimits } from './generated/spec/admin.js';
export type { RetryEvent, RetryOptions, RetryReason } from './retry.js';

export type AdminClientOptions = {
  /** The admin listener and its base path, e.g. `http://127.0.0.1:3001/admin/v1`. */
  baseUrl: string;
  /** One of the service's ADMIN_TOKENS. */
  token: string;
  /** Retry policy; see RetryOptions for the defaults. */
  retry?: Partial<RetryOptions>;
  /** The fetch to use (default: globalThis.fetch). */
  fetch?: (request: Request) => Promise<Response>;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
};

/** listKeys' query, as the admin contract defines it. */
export type ListKeysQuery = NonNullable<operations['listKeys']['parameters']['query']>;
/** listAuditEvents' filters and page: by key, by admin token name, by operation. */
export type AuditQuery = NonNullable<operations['listAuditEvents']['parameters']['query']>;
/** getKeyUsage's range of UTC days (`YYYY-MM-DD`; both default to today). */
export type UsageRange = NonNullable<operations['getKeyUsage']['parameters']['query']>;
/** A window that unbanKey can start over: `minute` or `day`. */
export type ResetWindow = NonNullable<
  NonNullable<operations['unbanKey']['parameters']['query']>['reset']
>[number];

/**
 * What createKey did: a new key and its secret (shown only now), or, for a retry of a create whose answer
 * was lost (`replayed`), the key created then, without its secret (rotate it for a new one).
 */
export type CreatedKey =
  | { key: AdminKey; secret: string; replayed: false }
  | { key: AdminKey; replayed: true };

export function createAdminClient(options: AdminClientOptions) {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const api = createFetchClient<paths>({
    baseUrl: options.baseUrl,
    headers: { ...options.headers, Authorization: `Bearer ${options.token}` },
    fetch: traced(send, (attempt) =>
      retryingFetch(
        attempt,
        { ...defaultRetry, ...options.retry },
        (r) => (retryAfterSeconds(r.headers) ?? 0) * 1000,
      ),
    ),
  });
  const keyPath = (keyId: string) => ({ params: { path: { keyId } } });

  return {
    /**
     * Creates a key bound to a plan (enterprise keys need `limits`). Every call sends an Idempotency-Key
     * (yours, or a new UUID), the same on each retry, so that a retry never creates a second key.
     */
    async createKey(
      key: NewAdminKey,
      options: CallOptions & { idempotencyKey?: string } = {},
    ): Promise<CreatedKey> {
      const idempotencyKey = options.idempotencyKey ?? globalThis.crypto.randomUUID();
      const data = await dataOf(options, (init) =>
        api.POST('/keys', { body: key, params: { header: { 'Idempotency-Key': idempotencyKey } }, ...init }),
      );
      return 'secret' in data
        ? { key: data.key, secret: data.secret, replayed: false }
        : { key: data, replayed: true };
    },
    /** One page of keys in creation order; `nextCursor` names the next (null on the last). */
    async listKeys(query: ListKeysQuery = {}, options?: CallOptions): Promise<AdminKeyPage> {
      return dataOf(options, (init) => api.GET('/keys', { params: { query }, ...init }));
    },
    /** Every key (matching the filters), following `nextCursor` page by page. */
    async *listAllKeys(
      query: Omit<ListKeysQuery, 'cursor'> = {},
      options?: CallOptions,
    ): AsyncGenerator<AdminKey> {
      let cursor: string | null = null;
      do {
        const page: AdminKeyPage = await this.listKeys(
          { ...query, ...(cursor !== null && { cursor }) },
          options,
        );
        yield* page.keys;
        cursor = page.nextCursor;
      } while (cursor !== null);
    },
    async getKey(keyId: string, options?: CallOptions): Promise<AdminKey> {
      return dataOf(options, (init) => api.GET('/keys/{keyId}', { ...keyPath(keyId), ...init }));
    },
    /** Changes plan, limits, label or customer; in force on every instance within 5 seconds. */
    async updateKey(keyId: string, change: AdminKeyUpdate, options?: CallOptions): Promise<AdminKey> {
      return dataOf(options, (init) =>
        api.PATCH('/keys/{keyId}', { ...keyPath(keyId), body: change, ...init }),
      );
    },
    /** A new secret (shown only now); the previous one works `gracePeriodSeconds` longer (default 0). */
    async rotateKey(
      keyId: string,
      rotation: { gracePeriodSeconds?: number } = {},
      options?: CallOptions,
    ): Promise<RotatedAdminKey> {
      const body = { gracePeriodSeconds: rotation.gracePeriodSeconds ?? 0 };
      return dataOf(options, (init) =>
        api.POST('/keys/{keyId}/rotate', { ...keyPath(keyId), body, ...init }),
      );
    },
    /** Revokes the key for good (every instance refuses it within 5 seconds). */
    async revokeKey(keyId: string, options?: CallOptions): Promise<AdminKey> {
      return dataOf(options, (init) => api.POST('/keys/{keyId}/revoke', { ...keyPath(keyId), ...init }));
    },
    /**
     * Ends the key's ban now. `reset` starts those windows over too: a window the key used up otherwise
     * refuses it until it ends (a reset day gives it its whole daily quota again).
     */
    async unbanKey(keyId: string, options?: CallOptions & { reset?: ResetWindow[] }): Promise<void> {
      return call(options, async (signal) => {
        const reset = options?.reset?.length ? options.reset : undefined;
        const { error, response } = await api.POST('/keys/{keyId}/unban', {
          params: { path: { keyId }, ...(reset && { query: { reset } }) },
          querySerializer: { array: { style: 'form', explode: false } }, // reset=minute,day
          ...(signal && { signal }),
        });
        if (!response.ok) fail(response, error);
      });
    },
    /** One page of the audit trail, newest first; `nextCursor` names the next (older) page. */
    async listAuditEvents(query: AuditQuery = {}, options?: CallOptions): Promise<AuditPage> {
      return dataOf(options, (init) => api.GET('/audit-events', { params: { query }, ...init }));
    },
    /** The key's running windows, its ban, and its requests per UTC day in `range`. */
    async getKeyUsage(keyId: string, range: UsageRange = {}, options?: CallOptions): Promise<KeyUsage> {
      return dataOf(options, (init) =>
        api.GET('/keys/{keyId}/usage', { params: { path: { keyId }, query: range }, ...init }),
      );
    },
  };
}

export type AnimalStoreAdminClient = ReturnType<typeof createAdminClient>;
