// The admin API's bearer tokens (ADMIN_TOKENS): compared in constant time, and named in logs and the audit
// trail by the name ADMIN_TOKENS gives each and a fingerprint (a hash prefix), never the token.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { AdminToken } from '../config.js';
import { HttpError } from '../http/http-error.js';

declare module 'express-serve-static-core' {
  interface Locals {
    /** The fingerprint of the admin token that authenticated the request (admin listener only). */
    adminToken?: string;
    /** That token's name in ADMIN_TOKENS (`token-` and its fingerprint for a token without one). */
    adminName?: string;
  }
}

const digest = (token: string) => createHash('sha256').update(token).digest();
/** What names a token in logs and audit records: the first 12 hex digits of its SHA-256. */
export const fingerprint = (token: string): string => digest(token).toString('hex').slice(0, 12);

const realm = 'animal-store-admin';
const bearer = /^Bearer +([!-~]+) *$/i;

/**
 * Refuses a request without one of `tokens` (401 with a bearer challenge). Every configured token is
 * compared, each over the same length (SHA-256 digests), so the time taken says nothing about any of them.
 */
export function requireAdminToken(tokens: AdminToken[]) {
  const expected = tokens.map(({ name, token }) => ({
    digest: digest(token),
    fingerprint: fingerprint(token),
    name: name ?? `token-${fingerprint(token)}`,
  }));
  return function requireAdminToken(req: Request, res: Response, next: NextFunction) {
    const sent = bearer.exec(req.get('authorization') ?? '')?.[1];
    const given = digest(sent ?? '');
    let matched: (typeof expected)[number] | undefined;
    for (const token of expected) if (timingSafeEqual(given, token.digest) && sent) matched = token;
    if (matched) {
      res.locals.adminToken = matched.fingerprint;
      res.locals.adminName = matched.name;
      return next();
    }
    const challenge =
      sent === undefined ? `Bearer realm="${realm}"` : `Bearer realm="${realm}", error="invalid_token"`;
    const message =
      sent === undefined
        ? 'An admin token is required: send Authorization: Bearer <token>.'
        : 'The admin token is invalid.';
    next(new HttpError(401, message, 'unauthorized', { 'WWW-Authenticate': challenge }));
  };
}
