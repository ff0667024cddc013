// Verified keys remembered for a few seconds, so that a request is identified without a store read: a
// decorator over any engine's KeyStore, applied once where the store is opened (open.ts). Revoking,
// rotating or changing a key through this process takes effect at once; through another (the keys command,
// the admin API of another instance) within keyCacheMs. Tokens that open no key are remembered as such for
// the same time, in a cache of their own, so a flood of bad tokens costs no store reads and cannot push the
// good ones out. lru-cache bounds both; entries are named by a hash of the token, never the token itself.

import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { propagationMs } from '../bounds.js';
import type { ApiKey, KeyStore } from './store.js';

/** How long a verified key, or a refused token, is answered from memory. */
export const keyCacheMs = propagationMs;
/** Entries in each of the two caches. */
export const keyCacheEntries = 10_000;

const name = (token: string) => hash('sha256', token, 'base64');

/**
 * The caches' options. `ttlResolution: 0`: an entry's age is read from the clock at each lookup. lru-cache's
 * default (1 ms) keeps the clock's reading for a millisecond with a timer, armed again every millisecond
 * under load: a timer for every few requests, 0.6 µs a request (pnpm bench --profile).
 */
const cacheOptions = { max: keyCacheEntries, ttl: keyCacheMs, ttlResolution: 0 };

export function withKeyCache(keys: KeyStore, now = () => Date.now()): KeyStore {
  const verified = new LRUCache<string, ApiKey>(cacheOptions);
  const refused = new LRUCache<string, true>(cacheOptions);
  /** Drops every remembered token of the key (its secrets changed here). */
  const forget = (id: string) => {
    for (const [token, key] of verified.entries()) if (key.id === id) verified.delete(token);
  };
  return {
    ...keys,
    async verify(token) {
      const cacheName = name(token);
      const known = verified.get(cacheName);
      if (known) return known;
      if (refused.get(cacheName)) return undefined;
      const key = await keys.verify(token);
      if (!key) {
        refused.set(cacheName, true);
        return undefined;
      }
      // A previous secret is remembered no longer than its grace period lasts.
      const ttl = key.graceEndsAt ? Math.min(keyCacheMs, Date.parse(key.graceEndsAt) - now()) : keyCacheMs;
      if (ttl > 0) verified.set(cacheName, key, { ttl });
      return key;
    },
    async revoke(id) {
      const revoked = await keys.revoke(id);
      forget(id);
      return revoked;
    },
    async update(id, fields) {
      const updated = await keys.update(id, fields);
      forget(id);
      return updated;
    },
    async rotate(id, graceSeconds) {
      const rotated = await keys.rotate(id, graceSeconds);
      forget(id);
      return rotated;
    },
  };
}
