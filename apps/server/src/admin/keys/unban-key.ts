// unbanKey: ends the key's ban and clears its record of violations.
import type { RequestHandler } from 'express';
import { type AdminDeps, changeOf, keyIdOf, noKey } from '../operation.js';

export const unbanKey = ({ store, limiter, audit }: AdminDeps): RequestHandler =>
  async function unbanKey(req, res) {
    const id = keyIdOf(req);
    if (!(await store.keys.get(id))) throw noKey(id);
    await limiter.unban(id);
    audit(changeOf(req, res, 'unbanKey'));
    res.status(204).end();
  };
