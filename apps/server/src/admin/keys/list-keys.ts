// listKeys: the keys in creation order (oldest or newest first), a page at a time (an opaque cursor), filtered
// by plan, customer, revocation, state (banned: by the limiter's ban list) and a search (id, label,
// customer: store/key-query.ts), how many in all, and which of the page are refused now (banned, a window
// used up) or near their limit.
import type { RequestHandler } from 'express';
import { HttpError } from '../../http/http-error.js';
import type { Plan } from '../../plans.js';
import type { ApiKey, KeyState } from '../../store/store.js';
import { standingNow } from '../../usage/report.js';
import { type AdminDeps, view } from '../operation.js';

/** An opaque position in creation order: base64url of `[createdAt, id]`. */
const cursorOf = (k: ApiKey) => Buffer.from(JSON.stringify([k.createdAt, k.id])).toString('base64url');

function positionOf(cursor: string): { createdAt: string; id: string } {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    // Only a position this service could have written: a key id and the ISO instant it was created at.
    // Anything else (a forged cursor holding U+0000, which PostgreSQL cannot even compare) is a 400.
    if (
      typeof createdAt === 'string' &&
      typeof id === 'string' &&
      /^[0-9a-f]{12}$/.test(id) &&
      !Number.isNaN(Date.parse(createdAt)) &&
      new Date(createdAt).toISOString() === createdAt
    ) {
      return { createdAt, id };
    }
  } catch {
    // answered below
  }
  throw new HttpError(400, 'query.cursor is not a cursor this service made; start again without it.');
}

export const listKeys = ({ store, limiter }: AdminDeps): RequestHandler =>
  async function listKeys(req, res) {
    const limit = Number(req.query.limit); // the contract's defaults filled in by validation
    const revoked = req.query.revoked === undefined ? undefined : String(req.query.revoked) === 'true';
    const state = req.query.state as KeyState | undefined;
    const filter = {
      plan: req.query.plan as Plan | undefined,
      customerId: req.query.customerId as string | undefined,
      revoked,
      state,
      banned: state === 'banned' ? await limiter.bannedNow() : undefined,
      search: req.query.q as string | undefined,
    };
    const [page, total] = await Promise.all([
      store.keys.page({
        ...filter,
        limit: limit + 1,
        after: typeof req.query.cursor === 'string' ? positionOf(req.query.cursor) : undefined,
        order: req.query.order === 'newest' ? 'newest' : 'oldest',
      }),
      store.keys.count(filter),
    ]);
    const shown = page.slice(0, limit);
    const last = shown.at(-1);
    const standings = await Promise.all(shown.map((key) => standingNow(key, limiter)));
    res.json({
      keys: shown.map(view),
      nextCursor: page.length > limit && last ? cursorOf(last) : null,
      total,
      limited: standings.flatMap(({ refused }) => refused ?? []),
      nearLimit: standings.flatMap(({ near }) => near ?? []),
    });
  };
