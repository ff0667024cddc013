// The signed-in session: the admin token, kept in this tab's sessionStorage only (gone when the tab closes;
// never in a URL, local storage, a cookie or a log), and the typed admin client built on it. The console is
// served by the admin listener itself, so the admin API is on the page's own origin.
import {
  type AnimalStoreAdminClient,
  ApiError,
  ConnectionError,
  createAdminClient,
} from '@animal-store/client/admin';

const storageKey = 'animal-store-console-token';

/** The admin API's base path (the admin contract's server URL ends in it). */
export const adminBasePath = '/admin/v1';

export type Admin = AnimalStoreAdminClient;

export const adminClient = (token: string): Admin =>
  createAdminClient({
    baseUrl: new URL(adminBasePath, window.location.origin).href,
    token,
    // A person is waiting: one retry at most, never a long wait (a 429's Retry-After is shown instead).
    retry: { maxAttempts: 2, maxRetryDelayMs: 2_000, maxTotalWaitMs: 2_000 },
  });

export const savedToken = () => window.sessionStorage.getItem(storageKey);
export const saveToken = (token: string) => window.sessionStorage.setItem(storageKey, token);
export const forgetToken = () => window.sessionStorage.removeItem(storageKey);

/** A refused token: the console signs out and says so. */
export const isRefusedToken = (error: unknown) => error instanceof ApiError && error.status === 401;
/** The service unreachable or failing (5xx): a read may succeed later by itself. */
export const isOutage = (error: unknown) =>
  error instanceof ConnectionError || (error instanceof ApiError && error.status >= 500);

/** What went wrong, for a person: the Error body's message and code, or why the service was not reached. */
export function problem(error: unknown): string {
  if (error instanceof ApiError) {
    // The service's own message may name the wait already ("retry in 12 seconds."): said once.
    const named = /\bretry in\b/i.test(error.message);
    const wait = error.retryAfter === undefined || named ? '' : ` Try again in ${error.retryAfter} s.`;
    const request = error.requestId ? `, request ${error.requestId}` : '';
    return `${error.message} (${error.status} ${error.code}${request}).${wait}`;
  }
  if (error instanceof ConnectionError) return `The service could not be reached (${error.reason}).`;
  return `Something unexpected went wrong: ${error instanceof Error ? error.message : String(error)}.`;
}
