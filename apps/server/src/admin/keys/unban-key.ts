// unbanKey: ends the key's ban and clears its record of violations; `reset` starts windows over too.
import type { RequestHandler } from 'express';
import type { WindowName } from '../../plans.js';
import { changeOf } from '../audit.js';
import { type AdminDeps, keyIdOf, noKey } from '../operation.js';

/** The windows `?reset=minute,day` names (the validator has checked each against the contract's enum). */
const windowsOf = (reset: unknown): WindowName[] =>
  (Array.isArray(reset) ? reset : typeof reset === 'string' ? reset.split(',') : []) as WindowName[];

export const unbanKey = ({ store, limiter, audit }: AdminDeps): RequestHandler =>
  async function unbanKey(req, res) {
    const id = keyIdOf(req);
    if (!(await store.keys.get(id))) throw noKey(id);
    await limiter.unban(id);
    const reset = windowsOf(req.query.reset);
    if (reset.length > 0) await limiter.resetWindows(id, reset);
    await audit(changeOf(req, res, 'unbanKey', id), { reset });
    res.status(204).end();
  };
