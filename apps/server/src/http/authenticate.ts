// Bearer authentication (RFC 6750). `identify` only finds out who is calling, so that the rate limiter
// can count the request against the key or, without a valid key, against the client address; `requireKey`
// then turns the unauthenticated away, with the same headers as everyone else.
import type { NextFunction, Request, Response } from 'express';
import type { ApiKey, KeyStore } from '../store/keys.js';
import { Problem } from './problem.js';

declare module 'express-serve-static-core' {
  interface Locals {
    apiKey?: ApiKey;
    /** Set when a bearer token was sent but is not a valid key. */
    tokenSent?: boolean;
  }
}

const realm = 'animal-store';
const bearer = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

export function identify(keys: KeyStore) {
  return (req: Request, res: Response, next: NextFunction) => {
    const header = req.get('authorization');
    if (header !== undefined && /^bearer(?: |$)/i.test(header)) {
      const token = bearer.exec(header)?.[1];
      const key = token === undefined ? undefined : keys.verify(token);
      if (key) res.locals.apiKey = key;
      else res.locals.tokenSent = true;
    }
    next();
  };
}

export function requireKey(_req: Request, res: Response, next: NextFunction) {
  if (res.locals.apiKey) return next();
  const challenge = res.locals.tokenSent
    ? `Bearer realm="${realm}", error="invalid_token", error_description="The API key is invalid or revoked"`
    : `Bearer realm="${realm}"`;
  const message = res.locals.tokenSent
    ? 'The API key is invalid or revoked.'
    : 'An API key is required: send Authorization: Bearer <API_KEY>.';
  next(new Problem(401, message, 'unauthorized', { 'WWW-Authenticate': challenge }));
}
