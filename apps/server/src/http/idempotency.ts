// Idempotency-Key on createPet (draft-ietf-httpapi-idempotency-key-header, as Stripe does it): the first
// request with a key claims it; a repeat with the same body replays the pet it created; a different body
// is a 422; a repeat while the first is still running is a 409. Keys are per API key and kept 24 hours.
// Written by hand: docs/decisions.md#idempotency.
import type { NextFunction, Request, Response } from 'express';
import { type IdempotencyStore, idempotencyWindowMs } from '../store/store.js';
import { bodyDigest } from './body-digest.js';
import { answers, HttpError } from './http-error.js';

/** A claim still in progress after this long belongs to a request that died: it may be taken over. */
const abandonedAfterMs = 60_000;

declare module 'express-serve-static-core' {
  interface Locals {
    /** The Idempotency-Key claimed by this request (see idempotency.ts). */
    idempotency?: { apiKeyId: string; key: string };
  }
}

/** Where a created pet can be read (the contract's Location): written once, for the create and its replay. */
export const petLocation = (baseUrl: string, id: number): string => `${baseUrl}/pets?id=${id}`;

/** For POST /pets (after validation): claims the key or answers from the earlier request. */
export function idempotency(store: IdempotencyStore) {
  return async function idempotency(req: Request, res: Response, next: NextFunction) {
    const key = req.get('idempotency-key');
    const apiKey = res.locals.apiKey;
    if (key === undefined || apiKey === undefined) return next();
    const scope = { apiKeyId: apiKey.id, key };
    const now = Date.now();
    const earlier = await store.claim(scope, bodyDigest(req.body), {
      now,
      expireBefore: now - idempotencyWindowMs,
      abandonBefore: now - abandonedAfterMs,
    });
    if (earlier === undefined) {
      res.locals.idempotency = scope;
      // A request that created nothing (an error, a dropped connection) gives its claim back.
      res.once('close', () => {
        if (res.statusCode !== 201) void store.release(scope).catch(() => {});
      });
      return next();
    }
    if (earlier.fingerprint !== bodyDigest(req.body)) {
      throw answers.idempotencyKeyReused();
    }
    if (!earlier.pet) {
      throw new HttpError(
        409,
        'A request with this Idempotency-Key is still being processed; retry later.',
        'idempotency_in_progress',
      );
    }
    res.set('Idempotent-Replayed', 'true');
    res.set('Location', petLocation(req.baseUrl, earlier.pet.id));
    res.status(201).json(earlier.pet);
  };
}
