// CORS for browser clients (the `cors` package), when CORS_ORIGINS allows any origin: preflights are
// answered here, after the rate limiter (they carry no key, so they count per address) and before the
// key is required; other responses get the allow and expose headers.
import cors from 'cors';

/** Response headers a page may read: every header a response of the contract declares. */
export function corsFor(origins: string[], exposedHeaders: string[]) {
  return cors({
    origin: origins.includes('*') ? '*' : origins,
    methods: ['GET', 'HEAD', 'POST'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id'],
    exposedHeaders,
    maxAge: 600,
  });
}
