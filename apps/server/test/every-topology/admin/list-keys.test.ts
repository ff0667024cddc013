// listKeys: pages in creation order (either way) with a cursor and a total, filters, a search (q), and cursors
// this service did not make.

import { describe, expect, it } from 'vitest';
import { call } from '../../support/harness.js';
import { adminSuite } from './suite.js';

const suite = adminSuite();
const { adminCall, post, createKey, bannedKey } = suite;

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

  it('filters by state now: active, banned (on any instance, until unbanned), disabled, expired, revoked; counted in total', async () => {
    const customerId = `cus_state_${Date.now()}`;
    const idOf = async (fields: Record<string, unknown>) =>
      (await createKey({ plan: 'free', customerId, ...fields })).key.id;
    const active = await idOf({});
    const disabled = await idOf({});
    expect(
      (await adminCall(`/keys/${disabled}`, { method: 'PATCH', body: '{"disabled":true}' })).status,
    ).toBe(200);
    const expired = await idOf({ expiresAt: new Date(Date.now() + 1_000).toISOString() });
    const revoked = await idOf({});
    expect((await post(`/keys/${revoked}/revoke`)).status).toBe(200);
    const banned = (await bannedKey({ customerId })).key.id;
    type Page = { keys: { id: string }[]; total: number };
    const inState = async (query: string) => {
      const res = await adminCall(`/keys?customerId=${customerId}&${query}`);
      expect(res.status).toBe(200);
      const page = (await res.json()) as Page;
      expect(page.total).toBe(page.keys.length);
      return page.keys.map((k) => k.id);
    };
    // The expiry falls due a second after the create: the list says so from then on.
    await expect.poll(() => inState('state=expired'), { timeout: 10_000 }).toEqual([expired]);
    expect(await inState('state=active')).toEqual([active, banned]); // a banned key is active, and banned
    expect(await inState('state=banned')).toEqual([banned]);
    expect(await inState('state=disabled')).toEqual([disabled]);
    expect(await inState('state=revoked')).toEqual([revoked]);
    expect(await inState('state=revoked&revoked=false')).toEqual([]);
    expect((await post(`/keys/${banned}/unban`)).status).toBe(204);
    expect(await inState('state=banned')).toEqual([]);
    const unknown = await adminCall('/keys?state=sleeping');
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ code: 'invalid_request', status: 400 });
  });

  it('names the keys of the page refused now (banned until when, or a window used up) and those near their limit (a window 80 % used or more); the others not at all', async () => {
    const customerId = `cus_limited_${Date.now()}`;
    const calm = (await createKey({ plan: 'free', customerId })).key.id;
    const spent = await createKey({ plan: 'enterprise', limits: { perMinute: 1, perDay: 100 }, customerId });
    expect((await call(`${suite.server.url}/v1/pets`, spent.secret)).status).toBe(200);
    const sendAs = async (secret: string, n: number) => {
      for (let i = 0; i < n; i++)
        expect((await call(`${suite.server.url}/v1/pets`, secret)).status).toBe(200);
    };
    const tens = () => createKey({ plan: 'enterprise', limits: { perMinute: 10, perDay: 100 }, customerId });
    const [near, below] = [await tens(), await tens()];
    await sendAs(near.secret, 8);
    await sendAs(below.secret, 7);
    type Page = {
      keys: { id: string }[];
      limited: { id: string; bannedUntil: string | null; usedUp: string[] }[];
      nearLimit: { id: string; windows: { name: string; percentUsed: number }[] }[];
    };
    const page = (await (await adminCall(`/keys?customerId=${customerId}&order=oldest`)).json()) as Page;
    expect(page.keys.map((k) => k.id)).toEqual([calm, spent.key.id, near.key.id, below.key.id]);
    expect(page.limited).toEqual([{ id: spent.key.id, bannedUntil: null, usedUp: ['minute'] }]);
    expect(page.nearLimit).toEqual([{ id: near.key.id, windows: [{ name: 'minute', percentUsed: 80 }] }]);
    const banned = (await bannedKey()).key.id;
    const found = (await (await adminCall(`/keys?q=${banned}`)).json()) as Page;
    expect(found.limited).toEqual([{ id: banned, bannedUntil: expect.any(String), usedUp: ['minute'] }]);
    expect(Date.parse(found.limited[0]?.bannedUntil ?? '')).toBeGreaterThan(Date.now());
  });

  it('lists newest first with order=newest, a page at a time, and counts every key the filters pass in total', async () => {
    const customerId = `cus_order_${Date.now()}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await createKey({ plan: i < 2 ? 'pro' : 'free', customerId })).key.id);
    type Page = { keys: { id: string }[]; nextCursor: string | null; total: number };
    const list = async (query: string) =>
      (await (await adminCall(`/keys?customerId=${customerId}&${query}`)).json()) as Page;
    const seen: string[] = [];
    let page = await list('order=newest&limit=2');
    for (;;) {
      expect(page.total).toBe(5); // on every page, not what is left
      seen.push(...page.keys.map((k) => k.id));
      if (page.nextCursor === null) break;
      page = await list(`order=newest&limit=2&cursor=${page.nextCursor}`);
    }
    expect(seen).toEqual([...ids].reverse());
    expect(await list('order=oldest&limit=2')).toMatchObject({
      keys: [{ id: ids[0] }, { id: ids[1] }],
      total: 5,
    });
    expect((await list('plan=pro&order=newest')).keys.map((k) => k.id)).toEqual([ids[1], ids[0]]);
    expect((await list('plan=pro')).total).toBe(2);
    expect((await list('plan=enterprise')).total).toBe(0);
  });

  it('pages keys created in one millisecond (by two instances) across page boundaries, each once, oldest or newest first', async () => {
    const customerId = `cus_same_ms_${Date.now()}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createKey({ plan: 'free', customerId })).key.id);
    const instant = new Date().toISOString();
    await suite.server.sql('UPDATE api_keys SET created_at = ? WHERE customer_id = ?', instant, customerId);
    const byId = [...ids].sort(); // within one millisecond, the contract orders keys by id
    for (const [order, expected] of [
      ['oldest', byId],
      ['newest', [...byId].reverse()],
    ] as const) {
      const seen: string[] = [];
      let cursor = '';
      for (let pages = 0; pages < 10; pages++) {
        const page = (await (
          await adminCall(`/keys?customerId=${customerId}&order=${order}&limit=2${cursor}`)
        ).json()) as { keys: { id: string }[]; nextCursor: string | null };
        seen.push(...page.keys.map((k) => k.id));
        if (page.nextCursor === null) break;
        cursor = `&cursor=${page.nextCursor}`;
      }
      expect(seen, order).toEqual(expected);
    }
  });

  it('finds keys by q in one step: the start of an id, the words of a label or customer id whatever their case and separators, % _ and \\ never wildcards, beside the other filters and paging, counted in total', async () => {
    const tag = `Q${Date.now()}`;
    const acme = (await createKey({ plan: 'free', label: `Acme ${tag} production` })).key.id;
    const customer = (await createKey({ plan: 'pro', customerId: `cus_${tag.toLowerCase()}_7` })).key.id;
    const odd = (await createKey({ plan: 'free', label: `Odd ${tag}%_\\ label` })).key.id;
    type Page = { keys: { id: string }[]; total: number };
    const page = async (q: string, more = '') => {
      const res = await adminCall(`/keys?q=${encodeURIComponent(q)}${more}`);
      expect(res.status).toBe(200);
      return (await res.json()) as Page;
    };
    const found = async (q: string, more = '') => (await page(q, more)).keys.map((k) => k.id);
    expect(await found(tag.toLowerCase())).toEqual([acme, customer, odd]); // labels and a customer id
    expect(await found(`ACME ${tag.toLowerCase()} PRODUCTION`)).toEqual([acme]);
    expect(await found(acme.slice(0, 9))).toContain(acme); // the start of an id
    expect(await found(acme.slice(3))).not.toContain(acme); // not any part of it
    expect(await found(`${tag}%_\\ label`)).toEqual([odd]); // separators, as a space is
    expect(await found(`${tag.slice(0, -2)}%${tag.slice(-1)}`)).toEqual([]); // % is no wildcard
    expect(await found(`${tag.slice(0, -1)}_`)).toEqual([]); // nor is _: a word ends there
    expect(await found(`${tag}_7`)).toEqual([customer]);
    expect(await found(tag, '&plan=pro')).toEqual([customer]);
    expect(await found(tag, '&plan=free&revoked=false')).toEqual([acme, odd]);
    // total counts what the search finds, not every key (nor every key the other filters pass).
    expect((await page(tag, '&limit=1')).total).toBe(3);
    expect((await page(`${tag} production`)).total).toBe(1);
    expect((await page(`${tag} nowhere`)).total).toBe(0);
    const first = (await (await adminCall(`/keys?q=${tag}&limit=2`)).json()) as {
      keys: { id: string }[];
      nextCursor: string;
    };
    const rest = (await (await adminCall(`/keys?q=${tag}&limit=2&cursor=${first.nextCursor}`)).json()) as {
      keys: { id: string }[];
      nextCursor: string | null;
    };
    expect([...first.keys, ...rest.keys].map((k) => k.id)).toEqual([acme, customer, odd]);
    expect(rest.nextCursor).toBeNull();
  });

  it('folds letters by one rule on every engine: non-ASCII capitals, Σ and ς, İ, decomposed accents, and words across separators', async () => {
    const tag = `f${Date.now()}`;
    const munich = (await createKey({ plan: 'free', label: `MÜNCHEN ${tag}` })).key.id;
    const athens = (await createKey({ plan: 'free', label: `ΟΔΟΣ ΑΘΗΝΑΣ ${tag}` })).key.id;
    const istanbul = (await createKey({ plan: 'free', label: `İSTANBUL-${tag}` })).key.id;
    const zoo = (await createKey({ plan: 'free', label: `zoo-atlas mobile app ${tag}` })).key.id;
    const found = async (q: string) => {
      const res = await adminCall(`/keys?q=${encodeURIComponent(q)}`);
      expect(res.status, q).toBe(200);
      return ((await res.json()) as { keys: { id: string }[] }).keys.map((k) => k.id);
    };
    for (const q of ['münchen', 'MÜNCHEN', 'München', 'Mu\u0308nchen'])
      expect(await found(`${q} ${tag}`), q).toEqual([munich]);
    for (const q of ['οδος', 'ΟΔΟΣ', 'οδοσ', 'Οδος'])
      expect(await found(`${q} αθηνας ${tag}`), q).toEqual([athens]);
    for (const q of ['istanbul', 'İstanbul', 'ISTANBUL'])
      expect(await found(`${q} ${tag}`), q).toEqual([istanbul]);
    for (const q of ['Zoo Atlas', 'zoo_atlas', 'ZOO-ATLAS MOBILE']) expect(await found(q), q).toContain(zoo);
  });

  it('takes every character a form or client sends: ! ( ) * as they are, a space as +', async () => {
    const tag = `r${Date.now()}`;
    const zoo = (await createKey({ plan: 'free', label: `Zoo Atlas (mobile)! ${tag}` })).key.id;
    for (const query of [
      `q=Zoo+Atlas+(mobile)+${tag}`,
      `q=(mobile)!+${tag}`,
      `q=zoo*atlas*(mobile)+${tag}`,
      `q=${tag}!`,
    ]) {
      const res = await adminCall(`/keys?${query}`);
      expect(res.status, query).toBe(200);
      expect(
        ((await res.json()) as { keys: { id: string }[] }).keys.map((k) => k.id),
        query,
      ).toEqual([zoo]);
    }
    for (const query of ['actor=ops!', 'actor=(ops)*', 'actor=on+call']) {
      const res = await adminCall(`/audit-events?${query}`);
      expect(res.status, query).toBe(200);
    }
  });

  it.each([
    'cursor=x',
    'limit=0',
    'limit=101',
    'limit=01',
    'plan=gold',
    'revoked=maybe',
    'other=1',
    'q=',
    'q=%01',
    `q=${'x'.repeat(256)}`,
  ])('refuses ?%s with a 400', async (query) => {
    const res = await adminCall(`/keys?${query}`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe('invalid_request');
  });
});
