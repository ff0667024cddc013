// What tells one request body from another for Idempotency-Key (both APIs' creates): a SHA-256 of the body
// in a canonical form, so the same body, whatever its key order or spacing, gives the same digest.
import { createHash } from 'node:crypto';

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export const bodyDigest = (body: unknown): string =>
  createHash('sha256').update(canonical(body)).digest('base64url');
