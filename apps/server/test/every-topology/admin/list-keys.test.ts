// listKeys: pages in creation order with a cursor, filters, and cursors this service did not make.

import { describe, expect, it } from 'vitest';
import { adminSuite } from './suite.js';

const suite = adminSuite();
const { adminCall, post, createKey } = suite;

describe('listKeys', () => {
  it('pages through the keys in creation order with nextCursor, filtered by plan, customer and revocation', async () => {
    const customerId = `cus_page_${Date.now()}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await createKey({ plan: i % 2 ? 'pro' : 'free', customerId })).key.id);
    }
    await post(`/keys/${ids[4]}/revoke`);
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const query = `customerId=${customerId}&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = (await (await adminCall(`/keys?${query}`)).json()) as {
        keys: { id: string }[];
        nextCursor: string | null;
      };
      expect(page.keys.length).toBeLessThanOrEqual(2);
      seen.push(...page.keys.map((k) => k.id));
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(ids);
    const ofPlan = (await (await adminCall(`/keys?customerId=${customerId}&plan=pro`)).json()) as {
      keys: { id: string }[];
    };
    expect(ofPlan.keys.map((k) => k.id)).toEqual([ids[1], ids[3]]);
    const active = (await (await adminCall(`/keys?customerId=${customerId}&revoked=false`)).json()) as {
      keys: { id: string }[];
    };
    expect(active.keys.map((k) => k.id)).toEqual(ids.slice(0, 4));
    const revoked = (await (await adminCall(`/keys?customerId=${customerId}&revoked=true`)).json()) as {
      keys: { id: string }[];
    };
    expect(revoked.keys.map((k) => k.id)).toEqual([ids[4]]);
  });

  it.each(['cursor=x', 'limit=0', 'limit=101', 'limit=01', 'plan=gold', 'revoked=maybe', 'other=1'])(
    'refuses ?%s with a 400',
    async (query) => {
      const res = await adminCall(`/keys?${query}`);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe('invalid_request');
    },
  );
});
