// Generated from openapi/ by scripts/generate.ts. Do not edit: run `pnpm generate`.

export const interfaceVersion = "1.0.0" as const;

export const servers = {
  "production": "https://api.animal-store.example/v1",
  "staging": "https://staging.animal-store.example/v1"
} as const;

export const deprecatedOperations = [
  {
    "operationId": "getPet",
    "method": "GET",
    "path": "/pets/{petId}",
    "deprecatedAt": "2026-11-22T00:00:00Z",
    "sunset": "2030-12-05T00:00:00Z",
    "replacement": {
      "operationId": "listPets",
      "path": "/pets"
    }
  }
] as const;

export const errorCodes = [
  "invalid_request",
  "unauthorized",
  "not_found",
  "method_not_allowed",
  "gone",
  "payload_too_large",
  "unsupported_media_type",
  "rate_limited",
  "temporarily_banned",
  "internal_error"
] as const;

export const petStatuses = [
  "available",
  "pending",
  "sold"
] as const;
