// Generated from openapi/ by scripts/generate.ts. Do not edit: run `pnpm generate`.

export const interfaceVersion = "2.2.0" as const;

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
      "path": "/pets",
      "target": "/pets?id={petId}"
    }
  }
] as const;

export const errorCodes = [
  "invalid_request",
  "unauthorized",
  "key_expired",
  "key_disabled",
  "not_found",
  "method_not_allowed",
  "request_timeout",
  "idempotency_in_progress",
  "gone",
  "precondition_failed",
  "payload_too_large",
  "unsupported_media_type",
  "range_not_satisfiable",
  "expectation_failed",
  "idempotency_key_reused",
  "rate_limited",
  "temporarily_banned",
  "header_fields_too_large",
  "internal_error",
  "not_implemented",
  "service_unavailable",
  "write_unconfirmed"
] as const;

export const errorStatuses = {
  "invalid_request": 400,
  "unauthorized": 401,
  "key_expired": 401,
  "key_disabled": 401,
  "not_found": 404,
  "method_not_allowed": 405,
  "request_timeout": 408,
  "idempotency_in_progress": 409,
  "gone": 410,
  "precondition_failed": 412,
  "payload_too_large": 413,
  "unsupported_media_type": 415,
  "range_not_satisfiable": 416,
  "expectation_failed": 417,
  "idempotency_key_reused": 422,
  "rate_limited": 429,
  "temporarily_banned": 429,
  "header_fields_too_large": 431,
  "internal_error": 500,
  "not_implemented": 501,
  "service_unavailable": 503,
  "write_unconfirmed": 503
} as const;

export const petStatuses = [
  "available",
  "pending",
  "sold"
] as const;

export const requestBodyLimit = 16384 as const;

export const pageSize = {
  "default": 20,
  "minimum": 1,
  "maximum": 100
} as const;
