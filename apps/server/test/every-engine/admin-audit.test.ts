// The admin API's audit trail (listAuditEvents): every change stored with who made it (the admin token's
// name in ADMIN_TOKENS), what, to which key, before and after, and the request; newest first, filtered,
// paged; the same from every instance on one store; kept for AUDIT_RETENTION_DAYS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprint } from '../../src/admin/tokens.js';
import { call, freshStore, startServer, type TestServer, type TestStore } from '../support/harness.js';

const billing = 'a'.repeat(40);
const support = 'b'.repeat(40);
const unnamed = 'c'.repeat(40);
const operations = 'd'.repeat(40);
const adminTokens = [`billing:${billing}`, `support:${support}`, unnamed, `ops_EU:${operations}`];

type Event = {
  id: number;
  at: string;
  actor: { name: string; token: string };
  operation: string;
  keyId: string;
  requestId: string;
  before: { plan: string; limits: { perMinute: number; perDay: number } } | null;
  after: { plan: string; limits: { perMinute: number; perDay: number } } | null;
  previousSecretValidUntil: string | null;
  reset: string[] | null;
};
type Page = { events: Event[]; nextCursor: string | null };

let store: TestStore;
let server: TestServer;
beforeAll(async () => {
  store = await freshStore();
  server = await startServer({ store, adminTokens });
});
afterAll(async () => {
  server.expectNoContractViolations();
  await server.close();
});

const as =
  (bearer: string, requestId?: string) =>
  (path: string, init: RequestInit = {}) =>
    call(`${server.adminUrl}/admin/v1${path}`, bearer, {
      ...init,
      headers: { ...(requestId && { 'x-request-id': requestId }) },
    });
const post = (bearer: string, path: string, body?: unknown, requestId?: string) =>
  as(bearer, requestId)(path, { method: 'POST', ...(body !== undefined && { body: JSON.stringify(body) }) });
async function events(query: string, on: TestServer = server): Promise<Page> {
  const res = await call(`${on.adminUrl}/admin/v1/audit-events?${query}`, support);
  expect([query, res.status, res.status === 200 ? '' : await res.clone().text()]).toEqual([query, 200, '']);
  return (await res.json()) as Page;
}
async function newKey(bearer = billing): Promise<string> {
  const res = await post(bearer, '/keys', { plan: 'free', label: 'Acme' });
  expect(res.status).toBe(201);
  return ((await res.json()) as { key: { id: string } }).key.id;
}

describe('the audit trail', () => {
  it('stores every change: who by token name, what, before and after, the request; newest first', async () => {
    // Each request sends an X-Request-Id of its own; the trail records the id the server gave it (its answer's
    // X-Request-Id), never the client's.
    const requestIds: Record<string, string> = {};
    const noted = (name: string, res: Response) => {
      const given = res.headers.get('x-request-id') as string;
      expect(given).not.toBe(`req-${name}`);
      requestIds[name] = given;
      return res;
    };
    const created = noted(
      'create',
      await post(billing, '/keys', { plan: 'free', label: 'Acme' }, 'req-create'),
    );
    const id = ((await created.json()) as { key: { id: string } }).key.id;
    const updated = noted(
      'update',
      await as(support, 'req-update')(`/keys/${id}`, {
        method: 'PATCH',
        body: JSON.stringify({ plan: 'pro' }),
      }),
    );
    expect(updated.status).toBe(200);
    const rotated = noted(
      'rotate',
      await post(billing, `/keys/${id}/rotate`, { gracePeriodSeconds: 60 }, 'req-rotate'),
    );
    const { previousSecretValidUntil } = (await rotated.json()) as { previousSecretValidUntil: string };
    expect(
      noted('unban', await post(support, `/keys/${id}/unban?reset=minute`, undefined, 'req-unban')).status,
    ).toBe(204);
    expect(noted('revoke', await post(unnamed, `/keys/${id}/revoke`, undefined, 'req-revoke')).status).toBe(
      200,
    );
    // Refused changes are not events: a revoked key cannot be changed, and a second revoke changes nothing.
    expect((await as(billing)(`/keys/${id}`, { method: 'PATCH', body: '{"plan":"free"}' })).status).toBe(404);
    expect((await post(billing, `/keys/${id}/revoke`)).status).toBe(200);

    const { events: trail, nextCursor } = await events(`keyId=${id}`);
    expect(nextCursor).toBeNull();
    const free = {
      plan: 'free',
      limits: { perMinute: 60, perDay: 1_000 },
      label: 'Acme',
      customerId: null,
      expiresAt: null,
      disabled: false,
    };
    const pro = { ...free, plan: 'pro', limits: { perMinute: 300, perDay: 10_000 } };
    const none = { before: null, after: null, previousSecretValidUntil: null, reset: null };
    const by = (bearer: string, name: string) => ({ actor: { name, token: fingerprint(bearer) } });
    expect(trail).toEqual(
      [
        {
          ...none,
          ...by(unnamed, `token-${fingerprint(unnamed)}`),
          operation: 'revokeKey',
          requestId: requestIds.revoke,
        },
        {
          ...none,
          ...by(support, 'support'),
          operation: 'unbanKey',
          reset: ['minute'],
          requestId: requestIds.unban,
        },
        {
          ...none,
          ...by(billing, 'billing'),
          operation: 'rotateKey',
          previousSecretValidUntil,
          requestId: requestIds.rotate,
        },
        {
          ...none,
          ...by(support, 'support'),
          operation: 'updateKey',
          before: free,
          after: pro,
          requestId: requestIds.update,
        },
        {
          ...none,
          ...by(billing, 'billing'),
          operation: 'createKey',
          after: free,
          requestId: requestIds.create,
        },
      ].map((expected) => ({ id: expect.any(Number), at: expect.any(String), keyId: id, ...expected })),
    );
    const ids = trail.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const times = trail.map((e) => Date.parse(e.at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(Date.now() - (times.at(-1) as number)).toBeLessThan(60_000);
    // The log keeps its lines, by fingerprint and name, never a token.
    const lines = server.logs
      .map((l) => JSON.parse(l))
      .filter((r) => r.msg === 'admin change' && r.keyId === id);
    expect(lines.map((r) => [r.operation, r.adminName])).toEqual(
      trail.map((e) => [e.operation, e.actor.name]).reverse(),
    );
    for (const secret of [billing, support, unnamed]) expect(server.logs.join('\n')).not.toContain(secret);
  });

  it('records no event for an update that changes nothing: the same terms sent again, a disable of a disabled key', async () => {
    const id = await newKey();
    const patch = (body: unknown) =>
      as(support)(`/keys/${id}`, { method: 'PATCH', body: JSON.stringify(body) }).then((res) => res.status);
    expect(await patch({ plan: 'free', label: 'Acme' })).toBe(200); // as created
    expect(await patch({ disabled: true })).toBe(200);
    expect(await patch({ disabled: true })).toBe(200); // already disabled
    const { events: trail } = await events(`keyId=${id}`);
    expect(trail.map((e) => e.operation)).toEqual(['updateKey', 'createKey']); // the disable only
    expect(trail[0]?.after).toMatchObject({ disabled: true });
  });

  it('filters by key, by token name and by operation, all at once, and pages newest first', async () => {
    const [mine, other] = [await newKey(), await newKey(support)];
    for (const plan of ['pro', 'business', 'free']) {
      const res = await as(support)(`/keys/${mine}`, { method: 'PATCH', body: JSON.stringify({ plan }) });
      expect(res.status).toBe(200);
    }
    await as(billing)(`/keys/${other}`, { method: 'PATCH', body: '{"plan":"pro"}' });
    const bySupport = await events(`keyId=${mine}&actor=support`);
    expect(bySupport.events.map((e) => e.after?.plan)).toEqual(['free', 'business', 'pro']);
    expect((await events(`keyId=${other}&actor=support`)).events.map((e) => e.operation)).toEqual([
      'createKey',
    ]);
    expect((await events(`keyId=${mine}&operation=createKey`)).events.map((e) => e.actor.name)).toEqual([
      'billing',
    ]);
    expect((await events('actor=nobody')).events).toEqual([]);

    const pages: string[][] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page: Page = await events(`keyId=${mine}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      pages.push(page.events.map((e) => e.after?.plan ?? ''));
      cursor = page.nextCursor;
    }
    expect(pages).toEqual([['free', 'business', 'pro'], ['free']]);
  });

  it("finds a part of a token's name, its case ignored and `_` a plain character, and the events of a time range", async () => {
    const [byBilling, byOps] = [await newKey(), await newKey(operations)];
    const actorsOf = async (query: string) =>
      (await events(`${query}&limit=100`)).events
        .filter((e) => e.keyId === byBilling || e.keyId === byOps)
        .map((e) => e.actor.name);
    expect(await actorsOf('actor=ILL')).toEqual(['billing']);
    expect(await actorsOf('actor=ops_eu')).toEqual(['ops_EU']);
    expect(await actorsOf('actor=s_E')).toEqual(['ops_EU']);
    expect(await actorsOf('actor=_')).toEqual(['ops_EU']); // not a wildcard: billing holds no `_`
    expect(await actorsOf('actor=%25')).toEqual([]);

    const [made] = (await events(`keyId=${byOps}`)).events;
    const at = Date.parse(made?.at ?? '');
    const iso = (ms: number) => new Date(ms).toISOString();
    const within = async (range: string) => (await events(`keyId=${byOps}&${range}`)).events.length;
    expect(await within(`since=${iso(at)}`)).toBe(1); // at or after
    expect(await within(`since=${iso(at + 1)}`)).toBe(0);
    expect(await within(`until=${iso(at)}`)).toBe(0); // before
    expect(await within(`until=${iso(at + 1)}`)).toBe(1);
    expect(await within(`since=${iso(at - 60_000)}&until=${iso(at + 60_000)}`)).toBe(1);
    // Another zone's spelling of the same instant is that instant.
    const offset = iso(at + 3_600_000).replace('Z', '+01:00');
    expect(await within(`since=${encodeURIComponent(offset)}`)).toBe(1);
    for (const query of ['since=yesterday', 'until=2026-13-01T00:00:00Z']) {
      const res = await call(`${server.adminUrl}/admin/v1/audit-events?${query}`, billing);
      expect([query, res.status]).toEqual([query, 400]);
    }
  });

  it('refuses a cursor it did not make, and an unknown operation, with the Error shape', async () => {
    for (const query of [
      `cursor=${Buffer.from('0').toString('base64url')}`,
      `cursor=${Buffer.from('12abc').toString('base64url')}`,
      `cursor=${Buffer.from('99999999999999999999').toString('base64url')}`,
      'operation=deleteKey',
      'keyId=XYZ',
      'limit=0',
    ]) {
      const res = await call(`${server.adminUrl}/admin/v1/audit-events?${query}`, billing);
      expect([query, res.status]).toEqual([query, 400]);
      expect(await res.json()).toEqual({ code: 'invalid_request', message: expect.any(String), status: 400 });
    }
  });

  it('answers the same from every instance on one store, and keeps events for AUDIT_RETENTION_DAYS', async () => {
    const id = await newKey();
    const [old] = await server.store.audit.page({ keyId: id, limit: 1 });
    if (!old) throw new Error('the create was not stored');
    const dayMs = 86_400_000;
    for (const daysAgo of [11, 9]) {
      await server.store.audit.add({
        ...old,
        at: new Date(Date.now() - daysAgo * dayMs).toISOString(),
        requestId: `aged-${daysAgo}`,
      });
    }
    expect((await events(`keyId=${id}`)).events.map((e) => e.requestId)).toHaveLength(3);
    // A second instance on the same store, keeping ten days: it deletes what is older when it starts.
    const second = await startServer({ store, adminTokens, env: { AUDIT_RETENTION_DAYS: '10' } });
    try {
      const count = async () => (await events(`keyId=${id}`, second)).events.length;
      await expect.poll(count, { timeout: 5_000, interval: 100 }).toBe(2);
      const kept = (await events(`keyId=${id}`, second)).events;
      expect(kept.map((e) => e.requestId)).toEqual(['aged-9', old.requestId]); // by number: added later
      expect(kept).toEqual((await events(`keyId=${id}`)).events);
    } finally {
      await second.close();
    }
  });
});
