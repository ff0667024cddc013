// What a key shows of itself wherever it is shown (the admin API's AdminKey, the keys CLI's records): its
// fields but its secrets and its quota, which each shows in its own shape (the admin contract's `limits`,
// the CLI's perMinute and perDay). Declared once, so that a new field reaches both.
import type { ApiKey } from './store.js';

export const shownKeyFields = [
  'id',
  'plan',
  'label',
  'customerId',
  'createdAt',
  'revokedAt',
  'lastUsedAt',
  'expiresAt',
  'disabledAt',
] as const satisfies readonly (keyof ApiKey)[];

export type ShownKey = Pick<ApiKey, (typeof shownKeyFields)[number]>;

export const shownKey = (k: ApiKey): ShownKey =>
  Object.fromEntries(shownKeyFields.map((field) => [field, k[field]])) as ShownKey;
