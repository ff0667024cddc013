// rotateKey: a new secret for the key (same id, plan and limits); the old one keeps working for the grace
// period asked for, and the answer says until when, as the store recorded it.
import type { RotatedAdminKey } from '@animal-store/spec/admin';
import type { RequestHandler } from 'express';
import { changeOf } from '../audit.js';
import { type AdminDeps, keyIdOf, noActiveKey } from '../operation.js';

export const rotateKey = ({ store, audit }: AdminDeps): RequestHandler =>
  async function rotateKey(req, res) {
    const id = keyIdOf(req);
    const graceSeconds = (req.body as { gracePeriodSeconds?: number } | undefined)?.gracePeriodSeconds ?? 0;
    const rotated = await store.keys.rotate(id, graceSeconds);
    if (!rotated) throw noActiveKey(id, await store.keys.get(id));
    await audit(changeOf(req, res, 'rotateKey', id), {
      previousSecretValidUntil: rotated.previousValidUntil,
    });
    res.json({
      id,
      secret: rotated.key,
      previousSecretValidUntil: rotated.previousValidUntil,
    } satisfies RotatedAdminKey);
  };
