// The admin listener: its tokens (every operation refused without one, near misses included, never
// reachable through the public port), its rate limit of its own, its contract, docs and 404s.
import { readFileSync } from 'node:fs';
import { bundledAdminSpecPath } from '@animal-store/spec/files';
import { describe, expect, it } from 'vitest';
import { call, startServer } from '../../support/harness.js';
import { adminSuite, nextToken, token } from './suite.js';

const adminContract = JSON.parse(readFileSync(bundledAdminSpecPath, 'utf8')) as {
  paths: Record<string, Record<string, { operationId: string }>>;
};
/** Every operation of the admin contract, with a path that names an existing key when it takes one. */
const operations = Object.entries(adminContract.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => method !== 'parameters')
    .map(([method, op]) => ({ operationId: op.operationId, method: method.toUpperCase(), path })),
);

const suite = adminSuite();
const { as, adminCall, createKey } = suite;

describe('every admin answer', () => {
  it('carries Cache-Control: no-store and X-Frame-Options: DENY, a secret and an error alike', async () => {
    const created = await as(token)('/keys', { method: 'POST', body: JSON.stringify({ plan: 'free' }) });
    const answers = [
      created,
      await adminCall('/keys?limit=1'),
      await adminCall('/keys/000000000000'),
      await adminCall('/keys?limit=0'),
      await as(undefined)('/keys'),
    ];
    expect(answers.map((res) => res.status)).toEqual([201, 200, 404, 400, 401]);
    for (const res of answers)
      expect([res.headers.get('cache-control'), res.headers.get('x-frame-options')]).toEqual([
        'no-store',
        'DENY',
      ]);
  });

  it('outside the API too: its reference, its contract and a stray 404 are neither kept nor framed', async () => {
    const url = suite.server.adminUrl;
    const answers = [
      await fetch(`${url}/docs`),
      await fetch(`${url}/openapi.json`),
      await fetch(`${url}/stray`),
    ];
    expect(answers.map((res) => res.status)).toEqual([200, 200, 404]);
    for (const res of answers)
      expect([res.url, res.headers.get('cache-control'), res.headers.get('x-frame-options')]).toEqual([
        res.url,
        'no-store',
        'DENY',
      ]);
  });

  it("makes its own request ids: a client's X-Request-Id is not the audit event's", async () => {
    const given = 'forged-request-id-0001';
    const res = await as(token)('/keys', {
      method: 'POST',
      headers: { 'X-Request-Id': given },
      body: JSON.stringify({ plan: 'free' }),
    });
    expect(res.status).toBe(201);
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const { key } = (await res.json()) as { key: { id: string } };
    const events = (await (await adminCall(`/audit-events?keyId=${key.id}`)).json()) as {
      events: { requestId: string }[];
    };
    expect(events.events.map((e) => e.requestId)).toEqual([id]);
  });

  it('HEAD is answered as GET without the body, where Allow lists it', async () => {
    const { key } = await createKey({ plan: 'free' });
    for (const path of ['/keys?limit=2', `/keys/${key.id}`]) {
      const [head, get] = [await adminCall(path, { method: 'HEAD' }), await adminCall(path)];
      expect([head.status, await head.text()]).toEqual([200, '']);
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
      expect(head.headers.get('cache-control')).toBe('no-store');
    }
    const put = await adminCall('/keys', { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toMatch(/\bHEAD\b/);
  });
});

describe('admin tokens', () => {
  it.each(operations)('$operationId is refused without a token, and with a wrong one', async (op) => {
    const { key } = await createKey({ plan: 'free' });
    const path = op.path.replace('{keyId}', key.id);
    const body = op.method === 'POST' || op.method === 'PATCH' ? JSON.stringify({ plan: 'pro' }) : undefined;
    // Near misses: a prefix (as short as one character), the right length but the last character wrong,
    // a longer string, another case. Any of them accepted would let a caller guess the token piece by piece.
    for (const bearer of [
      undefined,
      'c'.repeat(40),
      `${token}x`,
      token.slice(0, -1),
      token.slice(0, 1),
      `${token.slice(0, -1)}z`,
      token.toUpperCase(),
    ]) {
      const res = await as(bearer)(path, { method: op.method, ...(body && { body }) });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="animal-store-admin"/);
      expect(await res.json()).toEqual({ code: 'unauthorized', message: expect.any(String), status: 401 });
    }
    expect((await adminCall(`/keys/${key.id}`)).status).toBe(200); // nothing changed
    expect(((await (await adminCall(`/keys/${key.id}`)).json()) as { plan: string }).plan).toBe('free');
  });

  it.each(operations)('$operationId is not reachable through the public port', async (op) => {
    const { key, secret } = await createKey({ plan: 'free' });
    const path = `/admin/v1${op.path.replace('{keyId}', key.id)}`;
    const res = await call(`${suite.server.url}${path}`, token, { method: op.method });
    expect(res.status).toBe(404);
    const withKey = await call(`${suite.server.url}${path}`, secret, { method: op.method });
    expect(withKey.status).toBe(404);
  });

  it('accepts both tokens of a rotation, and the audit names each by its fingerprint only', async () => {
    const first = await createKey({ plan: 'free' });
    const second = await as(nextToken)('/keys', { method: 'POST', body: JSON.stringify({ plan: 'pro' }) });
    expect(second.status).toBe(201);
    const audits = suite.server.logs.map((l) => JSON.parse(l)).filter((r) => r.msg === 'admin change');
    const fingerprints = new Set(audits.map((r) => r.adminToken));
    expect(fingerprints.size).toBe(2);
    expect(suite.server.logs.join('\n')).not.toContain(token);
    expect(suite.server.logs.join('\n')).not.toContain(nextToken);
    expect(suite.server.logs.join('\n')).not.toContain(first.secret);
  });

  it('limits each token per minute, in a window of its own, with 429 and a Retry-After within the minute', async () => {
    const limited = await startServer({ adminTokens: [token, nextToken], adminPerMinute: 3 });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await call(`${limited.adminUrl}/admin/v1/keys`, token)).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const res = await call(`${limited.adminUrl}/admin/v1/keys`, token);
      const wait = Number(res.headers.get('retry-after'));
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(60);
      expect(await res.json()).toEqual({
        code: 'rate_limited',
        message: `Admin rate limit exceeded; retry in ${wait} seconds.`,
        status: 429,
      });
      // The other token of a rotation has its own window, untouched by the first's.
      expect((await call(`${limited.adminUrl}/admin/v1/keys`, nextToken)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('the admin listener', () => {
  it('serves its own contract at /openapi.json and a docs page at /docs, and counts changes in /metrics', async () => {
    const contract = (await (await fetch(`${suite.server.adminUrl}/openapi.json`)).json()) as {
      info: { title: string };
    };
    expect(contract.info.title).toBe('Animal Store Admin');
    const docs = await fetch(`${suite.server.adminUrl}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('Animal Store admin API reference');
    const metrics = await (await fetch(`${suite.server.url}/metrics`)).text();
    expect(metrics).toMatch(/animal_store_admin_changes_total\{operation="createKey"\} [1-9]/);
    // the public port serves the public contract, not the admin one
    const publicContract = (await (await fetch(`${suite.server.url}/openapi.json`)).json()) as {
      info: { title: string };
    };
    expect(publicContract.info.title).toBe('Animal Store');
  });
});

describe('a base URL without /admin/v1', () => {
  it('answers 404 saying where the admin API is, and what the request would have been there', async () => {
    const res = await call(`${suite.server.adminUrl}/keys`, token);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      code: 'not_found',
      message: 'No route GET /keys. The API is under /admin/v1: GET /admin/v1/keys.',
      status: 404,
    });
    // Under the base path, an unknown route is a plain 404, with no hint.
    const inside = await adminCall('/nothing');
    expect(inside.status).toBe(404);
    expect(((await inside.json()) as { message: string }).message).not.toContain('The API is under');
  });
});
