// getKey: one key, revoked or not.
import type { RequestHandler } from 'express';
import { type AdminDeps, keyIdOf, noKey, view } from '../operation.js';

export const getKey = ({ store }: AdminDeps): RequestHandler =>
  async function getKey(req, res) {
    const key = await store.keys.get(keyIdOf(req));
    if (!key) throw noKey(keyIdOf(req));
    res.json(view(key));
  };
