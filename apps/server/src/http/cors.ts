// CORS for browser clients (the `cors` package), when CORS_ORIGINS allows any origin: preflights are
// answered here, after the rate limiter (they carry no key, so they count per address) and before the
// key is required; other responses get the allow and expose headers.
import cors from 'cors';

/** Response headers a page may read: the ones the contract promises and a client needs. */
export const exposedHeaders = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
  'X-Request-Id',
  'Retry-After',
  'Location',
  'Deprecation',
  'Sunset',
  'Link',
  'Idempotent-Replayed',
];

export function corsFor(origins: string[]) {
  return cors({
    origin: origins.includes('*') ? '*' : origins,
    methods: ['GET', 'HEAD', 'POST'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id'],
    exposedHeaders,
    maxAge: 600,
  });
}
