// A key's expiry and its reversible disable (createKey's and updateKey's `expiresAt`, updateKey's
// `disabled`), and a rotation's grace shown on the key: what the admin API answers, what the public API
// does with the key (401 with a code of its own, judged at each request, cached key or not), and the audit.
import { describe, expect, it } from 'vitest';
import { call } from '../../support/harness.js';
import { adminSuite } from './suite.js';

const suite = adminSuite();
const { adminCall, createKey } = suite;
const patch = (id: string, body: unknown) =>
  adminCall(`/keys/${id}`, { method: 'PATCH', body: JSON.stringify(body) });
const keyOf = async (id: string) =>
  (await (await adminCall(`/keys/${id}`)).json()) as Record<string, unknown>;
const pets = (secret: string) => call(`${suite.server.url}/v1/pets`, secret);
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

/** A 401 of the public API with `code`, in the Error shape, naming why in its challenge. */
async function expectRefused(res: Response, code: string, why: string) {
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toBe(
    `Bearer realm="animal-store", error="invalid_token", error_description="${why}"`,
  );
  expect(await res.json()).toEqual({ code, message: `${why}: ask whoever issued it.`, status: 401 });
}
/** A 400 of the admin API naming body.expiresAt. */
async function expectPastRefused(res: Response) {
  expect(res.status).toBe(400);
  const body = (await res.json()) as { code: string; message: string; status: number };
  expect(body).toMatchObject({ code: 'invalid_request', status: 400 });
  expect(body.message).toContain('body.expiresAt must be in the future');
}

describe('a key that expires', () => {
  it('opens the API until its expiry, then is a 401 key_expired (the key cached meanwhile); cleared, it opens it again', async () => {
    const expiresAt = inMs(5_000); // room for a create and two calls on a busy machine
    // Pro: the polls below spend a request each, past what free allows in a minute.
    const { key, secret } = await createKey({ plan: 'pro', expiresAt });
    expect(await keyOf(key.id)).toMatchObject({ expiresAt, disabledAt: null });
    expect((await pets(secret)).status).toBe(200);
    const status = async () => (await pets(secret)).status;
    await expect.poll(status, { timeout: Date.parse(expiresAt) - Date.now() + 300, interval: 100 }).toBe(401);
    await expectRefused(await pets(secret), 'key_expired', 'The API key has expired');

    const cleared = await patch(key.id, { expiresAt: null });
    expect(cleared.status).toBe(200);
    expect(await cleared.json()).toMatchObject({ expiresAt: null });
    expect((await pets(secret)).status).toBe(200);
  });

  it('an expiry already past is a 400 naming body.expiresAt, on create and on update, and changes nothing', async () => {
    const listed = async () => ((await (await adminCall('/keys?limit=1')).json()) as { total: number }).total;
    const before = await listed();
    await expectPastRefused(await suite.post('/keys', { plan: 'free', expiresAt: inMs(-1_000) }));
    expect(await listed()).toBe(before);

    const later = inMs(3_600_000);
    const { key, secret } = await createKey({ plan: 'free', expiresAt: later });
    await expectPastRefused(await patch(key.id, { expiresAt: '2020-01-01T00:00:00Z' }));
    expect(await keyOf(key.id)).toMatchObject({ expiresAt: later });
    expect((await pets(secret)).status).toBe(200);
  });

  it('an expiry is moved by an update, and written as the service writes instants', async () => {
    const { key } = await createKey({ plan: 'free' });
    expect(await keyOf(key.id)).toMatchObject({ expiresAt: null });
    const moved = await patch(key.id, { expiresAt: '2099-05-01T12:00:00+02:00' });
    expect(await moved.json()).toMatchObject({ expiresAt: '2099-05-01T10:00:00.000Z' });
  });
});

describe('a disabled key', () => {
  it('is a 401 key_disabled at once on this instance; enabled again, it opens the API; the audit says both', async () => {
    const { key, secret } = await createKey({ plan: 'free' });
    expect((await pets(secret)).status).toBe(200); // cached as valid
    const disabled = await patch(key.id, { disabled: true });
    expect(disabled.status).toBe(200);
    const { disabledAt } = (await disabled.json()) as { disabledAt: string };
    expect(Date.parse(disabledAt)).toBeLessThanOrEqual(Date.now());
    await expectRefused(await pets(secret), 'key_disabled', 'The API key is disabled');
    // Disabled again: still disabled since the first time.
    expect(await (await patch(key.id, { disabled: true })).json()).toMatchObject({ disabledAt });

    const enabled = await patch(key.id, { disabled: false });
    expect(await enabled.json()).toMatchObject({ disabledAt: null });
    expect((await pets(secret)).status).toBe(200);

    const audit = (await (await adminCall(`/audit-events?keyId=${key.id}`)).json()) as {
      events: { operation: string; before: { disabled?: boolean } | null; after: { disabled?: boolean } }[];
    };
    const updates = audit.events
      .filter((e) => e.operation === 'updateKey')
      .map((e) => [e.before?.disabled, e.after.disabled]);
    expect(updates).toEqual(
      expect.arrayContaining([
        [false, true],
        [true, false],
      ]),
    );
  });
});

describe("a rotation's grace, on the key", () => {
  it('previousSecretValidUntil says until when the previous secret opens the key, and is null once it cannot', async () => {
    const { key, secret } = await createKey({ plan: 'free' });
    expect(await keyOf(key.id)).toMatchObject({ previousSecretValidUntil: null });
    const rotated = (await (
      await suite.post(`/keys/${key.id}/rotate`, { gracePeriodSeconds: 5 })
    ).json()) as { previousSecretValidUntil: string };
    expect(await keyOf(key.id)).toMatchObject({ previousSecretValidUntil: rotated.previousSecretValidUntil });
    expect((await pets(secret)).status).toBe(200);
    const status = async () => (await pets(secret)).status;
    const graceLeft = Date.parse(rotated.previousSecretValidUntil) - Date.now();
    await expect.poll(status, { timeout: graceLeft + 300, interval: 100 }).toBe(401);
    expect(await keyOf(key.id)).toMatchObject({ previousSecretValidUntil: null });
  });
});
