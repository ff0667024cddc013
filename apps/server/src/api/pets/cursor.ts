// The opaque pagination cursor: the last id of the previous page and its filters, signed with a
// per-database secret (HMAC-SHA256), so a client can neither forge nor alter one. Written by hand:
// docs/decisions.md#pet-cursor.
import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { type PetFilter, petFilterNames } from '../../store/store.js';

type Position = { afterId: number; filter: PetFilter };
type Sign = (payload: string) => string;

/** How many issued cursors' signatures are remembered (a few hundred KB at most). */
export const rememberedSignatures = 4096;

/**
 * The signatures of the cursors we issue, remembered (lru-cache): the same page boundary gets the same
 * cursor for every client, so a busy list signs each one once rather than on every page. Only what we
 * issue is remembered; a cursor a client sends is checked against the memory or signed afresh, never
 * added, so nobody can fill the memory from outside.
 */
export function issuedSignatures(sign: Sign, max = rememberedSignatures) {
  const issued = new LRUCache<string, string>({ max });
  return {
    issue(payload: string): string {
      let signature = issued.get(payload);
      if (signature === undefined) {
        signature = sign(payload);
        issued.set(payload, signature);
      }
      return signature;
    },
    expected: (payload: string): string => issued.get(payload) ?? sign(payload),
  };
}

export function createCursors(secret: string) {
  const key = createSecretKey(Buffer.from(secret)); // imported once, not on every page
  const signatures = issuedSignatures((payload) =>
    createHmac('sha256', key).update(payload).digest().subarray(0, 16).toString('base64url'),
  );
  return {
    encode(position: Position): string {
      // [afterId, then each filter's value or null, in petFilterNames' order]: the first filter (status)
      // always has its place, as in every release before; nulls after it are left out, so a filter added
      // later does not change the cursors of requests that do not use it.
      const values: unknown[] = petFilterNames.map((name) => position.filter[name] ?? null);
      while (values.length > 1 && values.at(-1) === null) values.pop();
      const payload = Buffer.from(JSON.stringify([position.afterId, ...values])).toString('base64url');
      return `${payload}.${signatures.issue(payload)}`;
    },
    /** The position, or undefined when the cursor was not made by us (or was altered). */
    decode(cursor: string): Position | undefined {
      // Exactly `payload.signature`, as issued: anything appended or missing is not our cursor.
      const parts = cursor.split('.');
      if (parts.length !== 2) return undefined;
      const [payload = '', signature = ''] = parts;
      const expected = Buffer.from(signatures.expected(payload));
      const given = Buffer.from(signature);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      const [afterId, ...values] = JSON.parse(Buffer.from(payload, 'base64url').toString()) as [
        number,
        ...unknown[],
      ];
      const filters = petFilterNames.flatMap((name, i) => (values[i] == null ? [] : [[name, values[i]]]));
      return { afterId, filter: Object.fromEntries(filters) as PetFilter };
    },
  };
}

export type Cursors = ReturnType<typeof createCursors>;
