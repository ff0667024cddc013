// The contract as TypeScript: generated types plus the facts code needs as values. Browser-safe.
import type { components } from './generated/openapi.js';

export * from './generated/contract.js';
export type { components, operations, paths } from './generated/openapi.js';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
export type Pets = components['schemas']['Pets'];
export type ApiError = components['schemas']['Error'];
export type ErrorCode = ApiError['code'];
