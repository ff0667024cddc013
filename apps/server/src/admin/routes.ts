// The admin API's operations (admin/openapi.yaml in the spec package), over the store's keys and usage
// and the rate limiter's windows and bans. Requests arrive authenticated and validated against the admin
// contract (admin/app.ts); every change is audited.
import type {
  AdminKey,
  AdminKeyUpdate,
  CreatedAdminKey,
  NewAdminKey,
  RotatedAdminKey,
} from '@animal-store/spec/admin';
import { type Request, type Response, Router } from 'express';
import { answers, HttpError } from '../http/http-error.js';
import { fingerprint } from '../http/idempotency.js';
import type { RateLimiter } from '../limits/policy.js';
import { type Plan, QuotaError, quotaFor } from '../plans.js';
import { keyAfter, termsDiffer } from '../store/key-change.js';
import type { ApiKey, Store } from '../store/store.js';
import { dayMs, type UsageMeter, utcDay } from '../usage/meter.js';
import { keyUsage } from '../usage/report.js';
import type { Audit } from './audit.js';

/** The longest range of days one usage request may ask for (the default retention). */
export const maxUsageDays = 400;

export type AdminDeps = {
  store: Pick<Store, 'keys' | 'usage'>;
  limiter: RateLimiter;
  /** This process's meter: its counts not written yet are added to what the store has. */
  meter?: Pick<UsageMeter, 'unwritten'>;
  audit: Audit;
};

const view = (k: ApiKey): AdminKey => ({
  id: k.id,
  plan: k.plan,
  limits: { perMinute: k.quota.perMinute, perDay: k.quota.perDay },
  label: k.label,
  customerId: k.customerId,
  createdAt: k.createdAt,
  revokedAt: k.revokedAt,
  lastUsedAt: k.lastUsedAt,
});

const limitNames = { perMinute: 'limits.perMinute', perDay: 'limits.perDay' };
/** What `decide` answers; limits that do not fit the plan (a QuotaError) are a 400 that says why. */
function limitsChecked<T>(decide: () => T): T {
  try {
    return decide();
  } catch (error) {
    if (error instanceof QuotaError) throw new HttpError(400, `${error.message}.`);
    throw error;
  }
}

const noKey = (id: string) => new HttpError(404, `Key ${id} was not found.`);
const noActiveKey = (id: string, key: ApiKey | undefined) =>
  key ? new HttpError(404, `Key ${id} is revoked: it cannot be changed.`) : noKey(id);

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

export function adminRoutes(deps: AdminDeps): Router {
  const { limiter, audit } = deps;
  const { keys } = deps.store;
  const router = Router();
  const who = (req: Request, res: Response, operation: string) => ({
    operation,
    adminToken: res.locals.adminToken as string,
    keyId: String(req.params.keyId),
  });
  const keyId = (req: Request) => String(req.params.keyId);

  router.get('/keys', async function listKeys(req, res) {
    const limit = Number(req.query.limit ?? 50);
    const revoked = req.query.revoked === undefined ? undefined : String(req.query.revoked) === 'true';
    const page = await keys.page({
      limit: limit + 1,
      after: typeof req.query.cursor === 'string' ? positionOf(req.query.cursor) : undefined,
      plan: req.query.plan as Plan | undefined,
      customerId: req.query.customerId as string | undefined,
      revoked,
    });
    const shown = page.slice(0, limit);
    const last = shown.at(-1);
    res.json({ keys: shown.map(view), nextCursor: page.length > limit && last ? cursorOf(last) : null });
  });

  router.post('/keys', async function createKey(req, res) {
    const body = req.body as NewAdminKey;
    const fields = {
      plan: body.plan,
      quota: limitsChecked(() => quotaFor(body.plan, body.limits ?? {}, limitNames)),
      label: body.label ?? null,
      customerId: body.customerId ?? null,
    };
    const location = (id: string) => `${req.baseUrl}/keys/${id}`;
    const idempotencyKey = req.get('idempotency-key');
    let created: ApiKey & { key: string };
    if (idempotencyKey === undefined) {
      created = await keys.create(fields);
    } else {
      const outcome = await keys.createOnce(fields, { key: idempotencyKey, fingerprint: fingerprint(body) });
      if ('reused' in outcome) {
        throw answers.idempotencyKeyReused();
      }
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
    audit(
      { operation: 'createKey', adminToken: res.locals.adminToken as string, keyId: created.id },
      undefined,
      created,
    );
    res
      .status(201)
      .location(location(created.id))
      .json({ key: view(created), secret: created.key } satisfies CreatedAdminKey);
  });

  router.get('/keys/:keyId', async function getKey(req, res) {
    const key = await keys.get(keyId(req));
    if (!key) throw noKey(keyId(req));
    res.json(view(key));
  });

  router.patch('/keys/:keyId', async function updateKey(req, res) {
    const id = keyId(req);
    const change = req.body as AdminKeyUpdate;
    const current = await keys.get(id);
    if (!current || current.revokedAt) throw noActiveKey(id, current);
    const updated = await keys.update(
      id,
      limitsChecked(() => keyAfter(current, change, limitNames)),
    );
    if (!updated) throw noActiveKey(id, current);
    if (termsDiffer(current, updated)) await limiter.termsChanged(id);
    audit(who(req, res, 'updateKey'), current, updated);
    res.json(view(updated));
  });

  router.post('/keys/:keyId/rotate', async function rotateKey(req, res) {
    const id = keyId(req);
    const graceSeconds = (req.body as { gracePeriodSeconds?: number } | undefined)?.gracePeriodSeconds ?? 0;
    const secret = await keys.rotate(id, graceSeconds);
    if (!secret) throw noActiveKey(id, await keys.get(id));
    audit(who(req, res, 'rotateKey'));
    const until = graceSeconds > 0 ? new Date(Date.now() + graceSeconds * 1000).toISOString() : null;
    res.json({ id, secret, previousSecretValidUntil: until } satisfies RotatedAdminKey);
  });

  router.post('/keys/:keyId/revoke', async function revokeKey(req, res) {
    const id = keyId(req);
    const current = await keys.get(id);
    if (!current) throw noKey(id);
    if (current.revokedAt === null && (await keys.revoke(id))) audit(who(req, res, 'revokeKey'));
    res.json(view((await keys.get(id)) ?? current));
  });

  router.post('/keys/:keyId/unban', async function unbanKey(req, res) {
    const id = keyId(req);
    if (!(await keys.get(id))) throw noKey(id);
    await limiter.unban(id);
    audit(who(req, res, 'unbanKey'));
    res.status(204).end();
  });

  router.get('/keys/:keyId/usage', async function getKeyUsage(req, res) {
    const id = keyId(req);
    const key = await keys.get(id);
    if (!key) throw noKey(id);
    const today = utcDay(Date.now());
    const from = typeof req.query.from === 'string' ? req.query.from : today;
    const to = typeof req.query.to === 'string' ? req.query.to : today;
    const span = (Date.parse(to) - Date.parse(from)) / dayMs + 1;
    if (!(span >= 1)) throw new HttpError(400, `query.to (${to}) is before query.from (${from}).`);
    if (span > maxUsageDays)
      throw new HttpError(400, `At most ${maxUsageDays} days at once (asked: ${span}).`);
    res.json(
      await keyUsage(
        key,
        { from, to },
        { usage: deps.store.usage, limiter, unwritten: deps.meter?.unwritten(id, from, to) },
      ),
    );
  });

  return router;
}
