// getKey: one key, revoked or not.
import type { RequestHandler } from 'express';
import { type AdminDeps, keyIdOf, noKey, view } from '../operation.js';

export const getKey = ({ store }: AdminDeps): RequestHandler =>
  async function getKey(req, res) {
    const id = keyIdOf(req);
    const key = await store.keys.get(id);
    if (!key) throw noKey(id);
    res.json(view(key));
  };
