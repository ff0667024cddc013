// The admin contract as TypeScript: the types generated from admin/openapi.yaml. Browser-safe.
import type { components } from './generated/admin.js';

export type { components, operations, paths } from './generated/admin.js';

export type AdminKey = components['schemas']['Key'];
export type CreatedAdminKey = components['schemas']['CreatedKey'];
export type NewAdminKey = components['schemas']['NewKey'];
export type AdminKeyUpdate = components['schemas']['KeyUpdate'];
export type AdminKeyPage = components['schemas']['KeyPage'];
export type RotatedAdminKey = components['schemas']['RotatedKey'];
export type KeyUsage = components['schemas']['KeyUsage'];
export type DayUsage = components['schemas']['DayUsage'];
