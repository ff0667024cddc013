// The admin contract as TypeScript: the types generated from admin/openapi.yaml, and the bounds a form
// checks before sending (adminLimits). Browser-safe.
import type { components } from './generated/admin.js';

export type { components, operations, paths } from './generated/admin.js';
export * from './generated/admin-contract.js';

export type AdminKey = components['schemas']['Key'];
export type CreatedAdminKey = components['schemas']['CreatedKey'];
/**
 * A key to create, by its plan, as the contract's rule says (its `limits` are for enterprise keys only,
 * and required there; the schema cannot say so without a oneOf whose runtime errors say it less clearly):
 * an enterprise key without limits, or limits on another plan, is a type error, as it is a 400.
 */
export type NewAdminKey =
  | (Omit<components['schemas']['NewKey'], 'plan' | 'limits'> & {
      plan: Exclude<components['schemas']['Plan'], 'enterprise'>;
      limits?: never;
    })
  | (Omit<components['schemas']['NewKey'], 'plan' | 'limits'> & {
      plan: 'enterprise';
      limits: components['schemas']['Limits'];
    });
/**
 * What to change: at least one field (the contract's `minProperties: 1`, which generated types cannot
 * say): an empty change `{}` is a type error, as it is a 400.
 */
export type AdminKeyUpdate = AtLeastOne<components['schemas']['KeyUpdate']>;
type AtLeastOne<T> = { [K in keyof T]-?: Required<Pick<T, K>> & Partial<T> }[keyof T];
export type AdminKeyPage = components['schemas']['KeyPage'];
export type RotatedAdminKey = components['schemas']['RotatedKey'];
export type KeyUsage = components['schemas']['KeyUsage'];
export type DayUsage = components['schemas']['DayUsage'];
export type AuditEvent = components['schemas']['AuditEvent'];
export type AuditPage = components['schemas']['AuditPage'];
export type KeyTerms = components['schemas']['KeyTerms'];
