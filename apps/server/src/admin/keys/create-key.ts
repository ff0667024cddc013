// createKey: a key on a plan (enterprise with limits of its own), its secret shown once; with an
// Idempotency-Key, a retry answers the key it created (without the secret) and another body is a 422. The
// key is each admin's own (kept under the token's name, which holds no `:`): another admin's create with
// the same Idempotency-Key is a create of its own, never a replay.
import type { CreatedAdminKey, NewAdminKey } from '@animal-store/spec/admin';
import type { RequestHandler } from 'express';
import { bodyDigest } from '../../http/body-digest.js';
import { answers } from '../../http/http-error.js';
import { quotaFor } from '../../plans.js';
import type { ApiKey } from '../../store/store.js';
import { changeOf } from '../audit.js';
import { type AdminDeps, expiryChecked, limitNames, limitsChecked, view } from '../operation.js';

export const createKey = ({ store, audit }: AdminDeps): RequestHandler =>
  async function createKey(req, res) {
    const body = req.body as NewAdminKey;
    const fields = {
      plan: body.plan,
      quota: limitsChecked(() => quotaFor(body.plan, body.limits ?? {}, limitNames)),
      label: body.label ?? null,
      customerId: body.customerId ?? null,
      expiresAt: expiryChecked(body.expiresAt) ?? null,
    };
    const location = (id: string) => `${req.baseUrl}/keys/${id}`;
    const idempotencyKey = req.get('idempotency-key');
    let created: ApiKey & { key: string };
    if (idempotencyKey === undefined) {
      created = await store.keys.create(fields);
    } else {
      const request = { key: `${res.locals.adminName}:${idempotencyKey}`, fingerprint: bodyDigest(body) };
      const outcome = await store.keys.createOnce(fields, request);
      if ('reused' in outcome) throw answers.idempotencyKeyReused();
      if ('replayed' in outcome) {
        const replayed = outcome.replayed;
        res
          .status(200)
          .location(location(replayed.id))
          .set('Idempotent-Replayed', 'true')
          .json(view(replayed));
        return;
      }
      created = outcome.created;
    }
    await audit(changeOf(req, res, 'createKey', created.id), { after: created });
    res
      .status(201)
      .location(location(created.id))
      .json({ key: view(created), secret: created.key } satisfies CreatedAdminKey);
  };
