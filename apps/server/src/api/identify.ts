// Bearer authentication (RFC 6750). `identify` only finds out who is calling, so that the rate limiter
// can count the request against the key or, without a valid key, against the client address; `requireKey`
// then turns the unauthenticated away, with the same headers as everyone else.
import type { NextFunction, Request, Response } from 'express';
import { HttpError } from '../http/http-error.js';
import type { ApiKey, KeyStore } from '../store/store.js';

declare module 'express-serve-static-core' {
  interface Locals {
    apiKey?: ApiKey;
    /** Set when a bearer token was sent but opens no key (malformed, unknown, wrong secret, revoked). */
    invalidToken?: boolean;
    /** Set when the token opens a key that is refused for now: past its expiry, or disabled. */
    refusedKey?: RefusedKey;
  }
}

/** Why a key a token opens is refused: each its own code and words, so that its holder knows whom to ask. */
const refusals = {
  key_expired: 'The API key has expired',
  key_disabled: 'The API key is disabled',
} as const;
type RefusedKey = keyof typeof refusals;

/**
 * Why `key` cannot be used now, if it cannot (an expiry is judged at each request, not when cached; the
 * clock is read only for a key that has one).
 */
const refusal = (key: ApiKey): RefusedKey | undefined =>
  key.disabledAt !== null
    ? 'key_disabled'
    : key.expiresAt !== null && key.expiresAt <= new Date().toISOString()
      ? 'key_expired'
      : undefined;

const realm = 'animal-store';
const bearer = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** How often one instance records a key's last use (a write per request would cost every request). */
const touchEveryMs = 60_000;

export function identify(keys: KeyStore) {
  const touched = new Map<string, number>();
  const touch = (id: string) => {
    const now = Date.now();
    if ((touched.get(id) ?? 0) > now - touchEveryMs) return;
    touched.set(id, now);
    void keys.touch(id).catch(() => touched.delete(id)); // bookkeeping: never fails a request
  };
  return async function identify(req: Request, res: Response, next: NextFunction) {
    const header = req.headers.authorization;
    if (header !== undefined && /^bearer(?: |$)/i.test(header)) {
      const token = bearer.exec(header)?.[1];
      const key = token === undefined ? undefined : await keys.verify(token);
      const refused = key && refusal(key);
      if (refused) res.locals.refusedKey = refused;
      else if (key) {
        res.locals.apiKey = key;
        touch(key.id);
      } else res.locals.invalidToken = true;
    }
    next();
  };
}

export function requireKey(_req: Request, res: Response, next: NextFunction) {
  if (res.locals.apiKey) return next();
  const refused = res.locals.refusedKey;
  if (refused) {
    const challenge = `Bearer realm="${realm}", error="invalid_token", error_description="${refusals[refused]}"`;
    return next(
      new HttpError(401, `${refusals[refused]}: ask whoever issued it.`, refused, {
        'WWW-Authenticate': challenge,
      }),
    );
  }
  const challenge = res.locals.invalidToken
    ? `Bearer realm="${realm}", error="invalid_token", error_description="The API key is invalid or revoked"`
    : `Bearer realm="${realm}"`;
  const message = res.locals.invalidToken
    ? 'The API key is invalid or revoked.'
    : 'An API key is required: send Authorization: Bearer <API_KEY>.';
  next(new HttpError(401, message, 'unauthorized', { 'WWW-Authenticate': challenge }));
}
