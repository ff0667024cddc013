// The opaque pagination cursor: the last id of the previous page and its status filter, signed with a
// per-database secret (HMAC-SHA256), so a client can neither forge nor alter one. Written by hand:
// docs/decisions.md#pet-cursor.
import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import type { PetStatus } from '@animal-store/spec';

type Position = { afterId: number; status: PetStatus | null };

export function createCursors(secret: string) {
  const key = createSecretKey(Buffer.from(secret)); // imported once, not on every page
  const sign = (payload: string) =>
    createHmac('sha256', key).update(payload).digest().subarray(0, 16).toString('base64url');
  return {
    encode(position: Position): string {
      const payload = Buffer.from(JSON.stringify([position.afterId, position.status])).toString('base64url');
      return `${payload}.${sign(payload)}`;
    },
    /** The position, or undefined when the cursor was not made by us (or was altered). */
    decode(cursor: string): Position | undefined {
      // Exactly `payload.signature`, as issued: anything appended or missing is not our cursor.
      const parts = cursor.split('.');
      if (parts.length !== 2) return undefined;
      const [payload = '', signature = ''] = parts;
      const expected = Buffer.from(sign(payload));
      const given = Buffer.from(signature);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      const [afterId, status] = JSON.parse(Buffer.from(payload, 'base64url').toString()) as [
        number,
        PetStatus | null,
      ];
      return { afterId, status };
    },
  };
}

export type Cursors = ReturnType<typeof createCursors>;
