// updateKey: a key's plan, limits, label, customer, expiry or disable. New terms (plan or limits) end the key's ban, and no
// instance bans it while they propagate (limits/policy.ts termsChanged).
import type { AdminKeyUpdate } from '@animal-store/spec/admin';
import type { RequestHandler } from 'express';
import { keyAfter, termsDiffer } from '../../store/key-change.js';
import type { ApiKey } from '../../store/store.js';
import { changeOf } from '../audit.js';
import {
  type AdminDeps,
  expiryChecked,
  keyIdOf,
  limitNames,
  limitsChecked,
  noActiveKey,
  view,
} from '../operation.js';

/** What the audit trail records of a key's terms (audit.ts), as one comparable string. */
const recorded = (key: ApiKey) =>
  JSON.stringify([key.plan, key.quota, key.label, key.customerId, key.expiresAt, key.disabledAt !== null]);

export const updateKey = ({ store, limiter, audit }: AdminDeps): RequestHandler =>
  async function updateKey(req, res) {
    const id = keyIdOf(req);
    const current = await store.keys.get(id);
    if (!current || current.revokedAt) throw noActiveKey(id, current);
    const change = { ...(req.body as AdminKeyUpdate) };
    if ('expiresAt' in change) change.expiresAt = expiryChecked(change.expiresAt) ?? null;
    const updated = await store.keys.update(
      id,
      limitsChecked(() => keyAfter(current, change, limitNames)),
    );
    if (!updated) throw noActiveKey(id, current);
    if (termsDiffer(current, updated)) await limiter.termsChanged(id);
    // An update that changes nothing the trail records (the same plan, limits, label, customer, expiry and
    // state) is answered, not recorded: the trail lists changes.
    if (recorded(current) !== recorded(updated))
      await audit(changeOf(req, res, 'updateKey', id), { before: current, after: updated });
    res.json(view(updated));
  };
