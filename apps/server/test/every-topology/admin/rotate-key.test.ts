// rotateKey: a new secret, the old one during the grace period the answer states (as stored).

import { describe, expect, it } from 'vitest';
import { backend } from '../../support/backends.js';
import { call } from '../../support/harness.js';
import { adminSuite } from './suite.js';

const suite = adminSuite();
const { post, createKey } = suite;

describe('rotateKey', () => {
  it('rotates with a grace period: both secrets work, then the old one no longer', async () => {
    const { key, secret } = await createKey({ plan: 'free' });
    const res = await post(`/keys/${key.id}/rotate`, { gracePeriodSeconds: 1 });
    expect(res.status).toBe(200);
    const rotated = (await res.json()) as { secret: string; previousSecretValidUntil: string };
    expect(Date.parse(rotated.previousSecretValidUntil)).toBeGreaterThan(Date.now());
    // The instant answered is the one the store keeps (the old secret is refused from then on).
    const [stored] = await suite.server.sql<{ previous_valid_until: string }>(
      'SELECT previous_valid_until FROM api_keys WHERE id = ?',
      key.id,
    );
    expect(stored?.previous_valid_until).toBe(rotated.previousSecretValidUntil);
    expect((await call(`${suite.server.url}/v1/pets`, secret)).status).toBe(200);
    expect((await call(`${suite.server.url}/v1/pets`, rotated.secret)).status).toBe(200);
    const status = async () => (await call(`${suite.server.url}/v1/pets`, secret)).status;
    await expect.poll(status, { timeout: 1_300 }).toBe(401);
    expect((await call(`${suite.server.url}/v1/pets`, rotated.secret)).status).toBe(200);
    const now = await post(`/keys/${key.id}/rotate`);
    expect(((await now.json()) as { previousSecretValidUntil: null }).previousSecretValidUntil).toBeNull();
    expect((await call(`${suite.server.url}/v1/pets`, rotated.secret)).status).toBe(401);
  });

  it('a rotation whose audit event the store fails to keep is still answered as made, with its one secret', async () => {
    const { key } = await createKey({ plan: 'free' });
    // The store refuses audit events, and only them, until the trigger is dropped.
    const refuse =
      backend === 'sqlite'
        ? [
            "CREATE TRIGGER audit_down BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'audit down'); END",
          ]
        : [
            "CREATE FUNCTION audit_down() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'audit down'; END $$ LANGUAGE plpgsql",
            'CREATE TRIGGER audit_down BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION audit_down()',
          ];
    for (const statement of refuse) await suite.server.sql(statement);
    try {
      const res = await post(`/keys/${key.id}/rotate`);
      expect(res.status).toBe(200);
      const rotated = (await res.json()) as { secret: string };
      expect((await call(`${suite.server.url}/v1/pets`, rotated.secret)).status).toBe(200);
      expect(suite.server.logs.join('\n')).toContain('admin change made but its audit event not stored');
    } finally {
      await suite.server.sql(`DROP TRIGGER audit_down${backend === 'sqlite' ? '' : ' ON audit_events'}`);
    }
    // Once the store keeps them again, the next change is recorded.
    expect((await post(`/keys/${key.id}/rotate`)).status).toBe(200);
    const events = (await (await suite.adminCall(`/audit-events?keyId=${key.id}`)).json()) as {
      events: { operation: string }[];
    };
    expect(events.events.map((e) => e.operation)).toEqual(['rotateKey', 'createKey']); // newest first; the first rotation's event is missing
  });
});
