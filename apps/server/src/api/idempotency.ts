// Idempotency-Key on createPet (draft-ietf-httpapi-idempotency-key-header, as Stripe does it): the first
// request with a key claims it; a repeat with the same body replays the pet it created; a different body
// is a 422; a repeat while the first is still running is a 409 with Retry-After. Keys are per API key and
// kept 24 hours. Written by hand: docs/decisions.md#idempotency.
//
// Each claim carries a token of its own request, and the store completes a claim (links its pet, in the
// pet's transaction) or gives it back only while the token is still the key's. A claim whose request went
// silent (a crash, a partition) is taken over after abandonedAfterMs; the silent request, should it come
// back, can then commit nothing (IdempotencyClaimLostError): one key never yields two pets.
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { bodyDigest } from '../http/body-digest.js';
import { answers } from '../http/http-error.js';
import { type IdempotencyClaim, type IdempotencyStore, idempotencyWindowMs } from '../store/store.js';
import { IdempotencyClaimLostError } from '../store/unavailable.js';

/** A claim still in progress after this long belongs to a request that died: it may be taken over. */
const abandonedAfterMs = 60_000;

/**
 * The longest a failed request waits for its claim to be given back before its error answer goes out: time
 * enough for a store that answers, short enough to keep the request within its bound when the store is
 * gone (the give-back then finishes, or not, after the answer; the claim is abandoned in time).
 */
const releaseWaitMs = 250;

declare module 'express-serve-static-core' {
  interface Locals {
    /** The Idempotency-Key claimed by this request (see idempotency.ts). */
    idempotency?: IdempotencyClaim;
  }
}

/** Where a created pet can be read (the contract's Location): written once, for the create and its replay. */
export const petLocation = (baseUrl: string, id: number): string => `${baseUrl}/pets?id=${id}`;

/**
 * createPet's handler under its Idempotency-Key (after validation): claims the key, or answers from the
 * earlier request. A create that fails gives the claim back before its error is answered, so that an
 * immediate retry proceeds.
 */
export function idempotent(store: IdempotencyStore, create: RequestHandler) {
  const giveBack = async (claim: IdempotencyClaim) => {
    const abort = new AbortController();
    await Promise.race([
      store.release(claim).catch(() => {}),
      delay(releaseWaitMs, undefined, { signal: abort.signal }).catch(() => {}),
    ]);
    abort.abort();
  };
  return async function idempotentCreate(req: Request, res: Response, next: NextFunction) {
    const key = req.get('idempotency-key');
    const apiKey = res.locals.apiKey;
    if (key === undefined || apiKey === undefined) return create(req, res, next);
    const claim = { apiKeyId: apiKey.id, key, token: randomUUID() };
    const fingerprint = bodyDigest(req.body);
    const now = Date.now();
    const earlier = await store.claim(claim, fingerprint, {
      now,
      expireBefore: now - idempotencyWindowMs,
      abandonBefore: now - abandonedAfterMs,
    });
    if (earlier === undefined) {
      res.locals.idempotency = claim;
      try {
        return await create(req, res, next);
      } catch (error) {
        if (error instanceof IdempotencyClaimLostError) throw answers.idempotencyInProgress();
        await giveBack(claim);
        throw error;
      }
    }
    if (earlier.fingerprint !== fingerprint) throw answers.idempotencyKeyReused();
    if (!earlier.pet) throw answers.idempotencyInProgress();
    res.set('Idempotent-Replayed', 'true');
    res.set('Location', petLocation(req.baseUrl, earlier.pet.id));
    res.status(201).json(earlier.pet);
  };
}
