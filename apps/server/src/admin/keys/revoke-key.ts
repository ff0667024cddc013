// revokeKey: the key stops opening the API (on every instance within the propagation bound); revoking a
// revoked key answers it again, with no second audit record.
import type { RequestHandler } from 'express';
import { changeOf } from '../audit.js';
import { type AdminDeps, keyIdOf, noKey, view } from '../operation.js';

export const revokeKey = ({ store, audit }: AdminDeps): RequestHandler =>
  async function revokeKey(req, res) {
    const id = keyIdOf(req);
    const current = await store.keys.get(id);
    if (!current) throw noKey(id);
    if (current.revokedAt === null && (await store.keys.revoke(id)))
      await audit(changeOf(req, res, 'revokeKey', id));
    res.json(view((await store.keys.get(id)) ?? current));
  };
