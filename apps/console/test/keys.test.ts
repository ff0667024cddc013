// The console's reading paths in headless Chromium: sign-in and sign-out, a wrong token, the keys' list
// with its filters, pages and search, a key's page with its running windows and its daily usage as a chart
// and a table (the bars are the requests sent), at 200 % zoom and by keyboard.
import { readFileSync } from 'node:fs';
import { call } from '@animal-store/test-support';
import { describe, expect, it } from 'vitest';
import { adminToken, type ConsolePage, checkView, chromium, consoleSuite } from './support/browser.js';

const suite = consoleSuite();
const admin = suite.admin;
const today = () => new Date().toISOString().slice(0, 10);
const rows = (page: ConsolePage) => page.locator('table').first().locator('tbody tr');

describe.runIf(chromium)('the console, reading', () => {
  it('a list read while the admin API cannot be reached says so, and shows itself once it answers, without a reload; a slow read says it is loading', async () => {
    const page = await suite.newPage();
    await suite.signIn(page);
    await expect.poll(() => page.locator('caption').first().textContent()).toMatch(/in all/);
    // The list's reads cut at the network (the server untouched), then slow, then as they are.
    let network: 'cut' | 'slow' | 'fine' = 'cut';
    await page.route(/\/admin\/v1\/keys\?/, async (route) => {
      if (network === 'cut') return route.abort('connectionrefused');
      if (network === 'slow') await new Promise((r) => setTimeout(r, 1_500));
      return route.continue();
    });
    await page.getByLabel('Plan').selectOption('pro');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toMatch(/could not be reached.*Asked again every 5 s\./);
    network = 'fine';
    await expect.poll(() => page.getByRole('alert').count(), { timeout: 15_000 }).toBe(0);
    await expect.poll(() => page.locator('caption').first().textContent()).toMatch(/in all|No key matches/);
    expect(page.url()).toContain('plan=pro');
    network = 'slow';
    await page.getByLabel('Plan').selectOption('free');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('status').filter({ hasText: 'Loading keys…' }).waitFor();
    expect(await page.locator('table').first().getAttribute('aria-busy')).toBe('true');
    await expect.poll(() => page.getByText('Loading keys…').count()).toBe(0);
  });

  it('filters changed while a read is out: the older answer is dropped, and the list says it is loading until the newer one is in', async () => {
    const customerId = `cus_race_${Date.now()}`;
    await admin().createKey({ plan: 'pro', customerId });
    const free = (await admin().createKey({ plan: 'free', customerId })).key.id;
    const page = await suite.newPage();
    await suite.signIn(page);
    await page.getByLabel('Customer').fill(customerId);
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => rows(page).count()).toBe(2);
    const both = await rows(page).locator('th').allTextContents();
    // The pro keys' read answers after 1 s, the free keys' (asked right after it) after 4 s.
    await page.route(/\/admin\/v1\/keys\?/, async (route) => {
      const plan = new URL(route.request().url()).searchParams.get('plan');
      await new Promise((r) => setTimeout(r, plan === 'pro' ? 1_000 : 4_000));
      return route.continue();
    });
    const proAnswered = page.waitForResponse((res) => /[?&]plan=pro/.test(res.url()));
    await page.getByLabel('Plan').selectOption('pro');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.url()).toContain('plan=pro');
    await page.getByLabel('Plan').selectOption('free');
    await page.getByRole('button', { name: 'Filter' }).click();
    await proAnswered;
    await page.waitForTimeout(300); // the pro answer handled by the page (it arrived while the free read is out)
    // Still the page before (marked busy), not the pro keys: the free read is the one asked for.
    expect(await rows(page).locator('th').allTextContents()).toEqual(both);
    expect(await page.getByText('Loading keys…').count()).toBe(1);
    await expect.poll(() => rows(page).locator('th').allTextContents(), { timeout: 10_000 }).toEqual([free]);
    await expect.poll(() => page.getByText('Loading keys…').count()).toBe(0);
    expect(page.url()).toContain('plan=free');
  });

  it('is served on the admin listener only, under a policy that allows nothing remote or inline', async () => {
    const page = await fetch(`${suite.server.adminUrl}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toContain('unsafe-inline');
    expect(await page.text()).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script at all
    const bare = await fetch(`${suite.server.adminUrl}/console`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([301, '/console/']);
    expect((await fetch(`${suite.server.url}/console/`)).status).toBe(404);
  });

  it('refuses a wrong token with the service’s message and keeps nothing; signs in and out', async () => {
    const page = await suite.newPage();
    await suite.signIn(page, 'x'.repeat(40));
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/refused this token: .*401/);
    await checkView(page, 'sign-in-refused', [401]);
    expect(await page.evaluate(() => sessionStorage.length + localStorage.length)).toBe(0);

    await suite.signIn(page);
    // The token is kept for the tab only: in its session storage, never in the address, local storage or
    // a cookie.
    const kept = await page.evaluate(() => ({
      session: Object.values(sessionStorage),
      local: localStorage.length,
      cookie: document.cookie,
      url: location.href,
    }));
    expect(kept).toEqual({
      session: [adminToken],
      local: 0,
      cookie: '',
      url: expect.not.stringContaining(adminToken),
    });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await checkView(page, 'signed-out', [401]);
  });

  it('lists keys by plan, customer and state, a page at a time, finds them by a part of a label or an id, and opens one by its id', async () => {
    const customerId = `cus_list_${Date.now()}`;
    const created = [];
    for (let i = 0; i < 27; i++)
      created.push(
        (await admin().createKey({ plan: i < 3 ? 'pro' : 'free', customerId, label: `k${i}` })).key,
      );
    await admin().revokeKey(created[3]?.id ?? '');
    await admin().updateKey(created[4]?.id ?? '', { disabled: true });
    const page = await suite.newPage();
    await suite.signIn(page);
    await page.getByLabel('Customer').fill(customerId);
    await page.getByRole('button', { name: 'Filter' }).click();
    // The caption, not the rows' count: the unfiltered first page has 25 rows too (the development key
    // the server made at its start is the 28th key).
    await expect
      .poll(() => page.locator('caption').first().textContent())
      .toBe('27 keys in all, 25 on this page');
    expect(await rows(page).count()).toBe(25);
    await checkView(page, 'keys');
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => rows(page).count()).toBe(2);
    // Newest first (the default): the two oldest on the second page.
    const newestFirst = (keys: ({ id: string } | undefined)[]) => [...keys].reverse().map((k) => k?.id);
    expect(await rows(page).locator('th').allTextContents()).toEqual(newestFirst(created.slice(0, 2)));
    // The page is in the address: a reload (or the address sent to someone) shows the same page.
    expect(page.url()).toMatch(/[?&]cursor=/);
    await page.reload();
    await expect
      .poll(() => rows(page).locator('th').allTextContents())
      .toEqual(newestFirst(created.slice(0, 2)));
    await page.getByRole('button', { name: 'Previous page' }).click();
    await expect.poll(() => rows(page).count()).toBe(25);
    expect(page.url()).not.toContain('cursor=');

    await page.getByLabel('Plan').selectOption('pro');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect
      .poll(() => rows(page).locator('th').allTextContents())
      .toEqual(newestFirst(created.slice(0, 3)));
    expect(page.url()).toContain(`plan=pro`); // the address keeps the filters

    await page.getByLabel('Plan').selectOption('');
    await page.getByLabel('State').selectOption('revoked');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => rows(page).locator('th').allTextContents()).toEqual([created[3]?.id]);
    expect(await rows(page).first().textContent()).toContain('revoked');
    expect(page.url()).toContain('state=revoked');
    await page.getByLabel('State').selectOption('disabled');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => rows(page).locator('th').allTextContents()).toEqual([created[4]?.id]);
    await page.getByLabel('State').selectOption('active');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect
      .poll(() => page.locator('caption').first().textContent())
      .toBe('25 keys in all, 25 on this page');

    // Oldest first, when asked: the first key made heads the list, and the address keeps the order.
    await page.getByLabel('State').selectOption('');
    await page.getByLabel('Order').selectOption('oldest');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => rows(page).locator('th').first().textContent()).toBe(created[0]?.id);
    expect(page.url()).toContain('order=oldest');
    await page.getByLabel('Order').selectOption('');
    // One box finds a key: any text lists the keys whose label or customer holds it (case ignored) or
    // whose id starts with it, beside the filters; a whole key id opens the key.
    await page.getByLabel('State').selectOption('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByLabel('Find a key').fill('K2');
    await page.getByRole('button', { name: 'Find' }).click();
    await expect
      .poll(() => rows(page).locator('th').allTextContents())
      .toEqual(newestFirst([created[2], ...created.slice(20)]));
    expect(page.url()).toContain('q=K2');
    expect(page.url()).toContain(`customerId=${customerId}`);
    await page.getByLabel('Find a key').fill(created[7]?.id.slice(0, 10) ?? '');
    await page.getByRole('button', { name: 'Find' }).click();
    await expect.poll(() => rows(page).locator('th').allTextContents()).toEqual([created[7]?.id]);
    await page.getByLabel('Find a key').fill(created[5]?.id ?? '');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('heading', { name: `Key ${created[5]?.id}` }).waitFor();
    await page.getByLabel('Find a key').waitFor({ state: 'detached' });
    expect(await page.locator('.facts').textContent()).toContain(customerId);
    // While the key is read, the view says so under its heading; a key that is not there, the same.
    let answer = () => {};
    const held = new Promise<void>((resolve) => {
      answer = resolve;
    });
    await page.route('**/admin/v1/keys/000000000000', async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${suite.server.adminUrl}/console/#/keys/000000000000`);
    await page.getByRole('heading', { level: 1, name: 'Key 000000000000' }).waitFor();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Loading the key…');
    answer();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/404 not_found/);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Key 000000000000');
    await checkView(page, 'key-not-found', [404]);
  });

  it('says in the list which keys are refused now (a window used up) or near their limit, and opens a key from anywhere on its row', async () => {
    const customerId = `cus_refused_${Date.now()}`;
    const spent = (await admin().createKey({
      plan: 'enterprise',
      limits: { perMinute: 1, perDay: 100 },
      customerId,
    })) as { key: { id: string }; secret: string };
    expect((await call(`${suite.server.url}/v1/pets`, spent.secret)).status).toBe(200);
    const near = (await admin().createKey({
      plan: 'enterprise',
      limits: { perMinute: 10, perDay: 100 },
      customerId,
    })) as { key: { id: string }; secret: string };
    for (let i = 0; i < 9; i++)
      expect((await call(`${suite.server.url}/v1/pets`, near.secret)).status).toBe(200);
    await admin().createKey({ plan: 'free', customerId });
    const page = await suite.newPage();
    await suite.signIn(page);
    await page.getByLabel('Customer').fill(customerId);
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => rows(page).count()).toBe(3);
    const states = await rows(page).locator('td:last-child').allTextContents();
    expect(states).toEqual(['active', 'active; minute 90 % used', 'active; minute used up']); // newest first
    // The whole row opens its key, not only the id: a click where its State cell is (the id's link covers
    // the row, so the pointer lands on the link).
    const cell = await rows(page).last().locator('td:last-child').boundingBox();
    if (!cell) throw new Error('the State cell is not on the page');
    await page.mouse.click(cell.x + cell.width / 2, cell.y + cell.height / 2);
    await page.getByRole('heading', { name: `Key ${spent.key.id}` }).waitFor();
  });

  it('reads a key’s page on a 375 px phone: nothing off the side, every region it scrolls reachable (axe), the chart’s text readable with its unit, ticks and empty state', async () => {
    const { key } = await admin().createKey({ plan: 'pro', customerId: `cus_${'phone'.repeat(25)}` });
    const page = await suite.newPage({ width: 375, height: 800 });
    await suite.signIn(page);
    await page.goto(`${suite.server.adminUrl}/console/#/keys/${key.id}`);
    await page.locator('td[data-window="minute"]').first().waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    // The chart says what it counts, and that nothing was counted; its text stays readable (was ~6 px).
    const chart = page.locator('svg.chart');
    expect(await chart.locator('text.unit').textContent()).toBe('requests a day');
    expect(await chart.locator('text.empty').textContent()).toBe('No requests in these days.');
    const textPx = await chart.locator('text.unit').evaluate((text) => text.getBoundingClientRect().height);
    expect(textPx).toBeGreaterThanOrEqual(10);
    expect(await chart.locator('.day-tick').count()).toBe(30); // a tick under each of the 30 days
    // The windows' "day" is not the chart's: the page says which is which.
    expect(await page.locator('section[aria-labelledby="windows-title"] caption').textContent()).toContain(
      'its day is 24 hours from then, not a UTC day',
    );
    // The windows table breaks no word and no number across lines (it broke "Remaining" and "10,000"):
    // each word of each cell is laid out in one box.
    const broken = await page.locator('section[aria-labelledby="windows-title"] table').evaluate((table) =>
      [...table.querySelectorAll('th, td')].flatMap((cell) => {
        const text = cell.firstChild;
        if (!text || text.nodeType !== Node.TEXT_NODE) return [];
        return [...(text.textContent ?? '').matchAll(/\S+/g)].flatMap((word) => {
          const range = document.createRange();
          range.setStart(text, word.index);
          range.setEnd(text, word.index + word[0].length);
          return range.getClientRects().length > 1 ? [word[0]] : [];
        });
      }),
    );
    expect(broken).toEqual([]);
    await checkView(page, 'key-at-375');
  });

  it('follows a dark system theme: a dark page, every text readable against it (axe), the list and a key', async () => {
    const { key, secret } = (await admin().createKey({ plan: 'free', label: 'dark' })) as {
      key: { id: string };
      secret: string;
    };
    expect((await call(`${suite.server.url}/v1/pets`, secret)).status).toBe(200);
    const page = await suite.newPage();
    await page.emulateMedia({ colorScheme: 'dark' });
    await suite.signIn(page);
    const paper = () => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    expect(await paper()).toBe('rgb(22, 27, 34)');
    await checkView(page, 'keys-dark');
    await page.goto(`${suite.server.adminUrl}/console/#/keys/${key.id}`);
    await page.locator('td[data-window="minute"]').first().waitFor();
    await checkView(page, 'key-dark');
  });

  it.each([1280, 1920])(
    'fits the list in a %i px window: a long label and customer id wrap in their cells, every column shown',
    async (width) => {
      const customerId = `cus_${'wide'.repeat(30)}_${width}_${Date.now()}`; // 124 characters and more
      await admin().createKey({ plan: 'pro', customerId, label: `${'A long label '.repeat(15)}end` });
      const page = await suite.newPage({ width, height: 900 });
      await suite.signIn(page);
      await page.getByLabel('Customer').fill(customerId);
      await page.getByRole('button', { name: 'Filter' }).click();
      await expect.poll(() => rows(page).count()).toBe(1);
      const fits = await page.evaluate(() => {
        const table = document.querySelector('table') as HTMLTableElement;
        return {
          table: table.scrollWidth <= table.clientWidth,
          page: document.documentElement.scrollWidth <= window.innerWidth,
        };
      });
      expect(fits).toEqual({ table: true, page: true });
    },
  );

  it('draws a key’s day as the requests sent: admitted, limited and banned, with its numbers', async () => {
    const { key, secret } = (await admin().createKey({
      plan: 'enterprise',
      limits: { perMinute: 6, perDay: 1000 },
    })) as { key: { id: string }; secret: string };
    const codes = [];
    for (let i = 0; i < 9; i++) codes.push((await call(`${suite.server.url}/v1/pets`, secret)).status);
    expect(codes).toEqual([...Array(6).fill(200), 429, 429, 429]);

    const page = await suite.newPage();
    await suite.signIn(page);
    await page.goto(`${suite.server.adminUrl}/console/#/keys/${key.id}`);
    const day = page.locator(`.chart g.day[data-date="${today()}"]`);
    await day.waitFor();
    // The running minute, as the admin API reads it: 6 of 6 used.
    const minute = page.locator('td[data-window="minute"]');
    await expect
      .poll(() => minute.allTextContents())
      .toEqual(['6', '6', expect.any(String), '0', expect.stringMatching(/UTC$/)]);
    // The table for screen readers has today's numbers, and the other days at 0.
    const todayRow = page.locator('table.visually-hidden tbody tr').last();
    await expect.poll(() => todayRow.locator('td').allTextContents()).toEqual(['6', '3', '0']);
    expect(await page.locator('table.visually-hidden tbody tr').count()).toBe(30);
    // The bars: heights in proportion to the counts, the same scale for each.
    const height = async (kind: string) => Number(await day.locator(`rect.${kind}`).getAttribute('height'));
    expect(await height('admitted')).toBeGreaterThan(0);
    expect((await height('limited')) / (await height('admitted'))).toBeCloseTo(3 / 6, 5);
    expect(await height('banned')).toBe(0);
    await expect.poll(() => page.locator('.chart text.empty').count()).toBe(0); // requests were counted
    // Dates under the days: a week's apart from the last, by the ends' own.
    const weeks = await page.locator('.chart text.week').allTextContents();
    expect(weeks.length).toBeGreaterThanOrEqual(2);
    for (const label of weeks) expect(label).toMatch(/^\d{2}-\d{2}$/);
    // The range's days download as CSV, as the table has them.
    const saved = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download CSV' }).click();
    const file = await saved;
    expect(file.suggestedFilename()).toMatch(
      new RegExp(`^key-${key.id}-usage-\\d{4}-\\d{2}-\\d{2}-${today()}\\.csv$`),
    );
    const csv = readFileSync((await file.path()) as string, 'utf8').split('\r\n');
    expect(csv[0]).toBe('date,admitted,limited,banned');
    expect(csv).toHaveLength(32); // a header, 30 days, the last line's end
    expect(csv[30]).toBe(`${today()},6,3,0`);
    // Pointed at, the day says its numbers.
    await day.hover();
    expect(await page.locator('.day-detail').textContent()).toBe(
      `${today()}: 6 admitted, 3 limited, 0 banned`,
    );
    await checkView(page, 'key');
  });

  it('reads the running windows and today’s totals again while the key’s page is open', async () => {
    const { key, secret } = await suite.freeKey();
    const page = await suite.newPage();
    await suite.signIn(page);
    await page.goto(`${suite.server.adminUrl}/console/#/keys/${key.id}`);
    const used = page.locator('td[data-window="minute"]').nth(1);
    await expect.poll(() => used.textContent()).toBe('0');
    for (let i = 0; i < 2; i++) expect((await call(`${suite.server.url}/v1/pets`, secret)).status).toBe(200);
    // No reload: the page reads the usage again every 5 s (waited for up to three reads: a loaded machine's
    // read and render came after 8 s once).
    await expect.poll(() => used.textContent(), { timeout: 15_000 }).toBe('2');
    const todayRow = page.locator('table.visually-hidden tbody tr').last();
    await expect.poll(() => todayRow.locator('td').first().textContent(), { timeout: 15_000 }).toBe('2');
  });

  it('asks for the new UTC day once its page stays open past midnight (the browser’s clock moved on)', async () => {
    const { key } = await admin().createKey({ plan: 'free' });
    const page = await suite.newPage();
    const midnight = Date.parse(`${today()}T00:00:00Z`);
    await page.clock.install({ time: midnight - 10_000 }); // this page's clock: ten seconds before today
    await suite.signIn(page);
    const asked: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname.endsWith(`/keys/${key.id}/usage`)) asked.push(url.searchParams.get('to') ?? '');
    });
    await page.goto(`${suite.server.adminUrl}/console/#/keys/${key.id}`);
    const yesterday = new Date(midnight - 1).toISOString().slice(0, 10);
    await expect.poll(() => asked.at(-1)).toBe(yesterday);
    await page.clock.fastForward(15_000); // past midnight, and past the next read
    await expect.poll(() => asked.at(-1)).toBe(today());
    await expect.poll(() => page.getByLabel('To', { exact: true }).inputValue()).toBe(today());
  });

  it('takes a range of days as ISO dates, as it shows every date, and says what is wrong with one it cannot show', async () => {
    const { key } = await admin().createKey({ plan: 'free' });
    const page = await suite.newPage();
    await suite.signIn(page);
    const asked: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname.endsWith(`/keys/${key.id}/usage`)) asked.push(url.search);
    });
    await page.goto(`${suite.server.adminUrl}/console/#/keys/${key.id}`);
    const from = page.getByLabel('From', { exact: true });
    const to = page.getByLabel('To', { exact: true });
    await expect.poll(() => to.inputValue()).toBe(today());
    expect(await from.getAttribute('type')).toBeNull(); // text, not the browser's locale's date picker
    const show = async (first: string, last: string) => {
      await from.fill(first);
      await to.fill(last);
      await page.getByRole('button', { name: 'Show' }).click();
      return from.evaluate((input: HTMLInputElement) => input.validationMessage);
    };
    expect(await show('2026-13-01', today())).toBe('Write each day as YYYY-MM-DD (a UTC day).');
    expect(await show(today(), '2020-01-01')).toBe('From is after To.');
    expect(await show('2020-01-01', today())).toBe('At most 400 days at once.');
    const before = asked.length;
    expect(await show(today(), today())).toBe('');
    await expect
      .poll(() => asked.slice(before).some((search) => search.includes(`from=${today()}`)))
      .toBe(true);
  });

  it('is usable by keyboard alone and at 200 % zoom: a skip button, and each new view’s heading takes the focus', async () => {
    const { key } = await admin().createKey({ plan: 'free', label: 'keyboard' });
    // 200 % zoom of a 1280-pixel-wide window: 640 CSS pixels across.
    const page = await suite.newPage({ width: 640, height: 800 });
    await page.goto(`${suite.server.adminUrl}/console/`);
    await page.keyboard.press('Tab');
    await page.keyboard.type(adminToken);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
    const focused = () => page.evaluate(() => document.activeElement?.textContent ?? '');
    // The sign-in form is gone: its view's heading has the focus, and Tab goes on from there.
    await expect.poll(focused).toBe('Keys');
    await page.keyboard.press('Tab');
    while (!(await page.evaluate(() => document.activeElement?.getAttribute('name') === 'q')))
      await page.keyboard.press('Tab');
    await page.keyboard.type(key.id);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: `Key ${key.id}` }).waitFor();
    await expect.poll(focused).toBe(`Key ${key.id}`); // the new view's heading, not the top of the page
    // A page just loaded starts at its top, where the first Tab reaches a way past the header.
    await page.reload();
    await page.getByRole('heading', { name: `Key ${key.id}` }).waitFor();
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await focused()).toBe(`Key ${key.id}`);
    // The chart takes the focus and walks the days with the arrow keys.
    await page.locator('svg.chart').focus();
    await page.keyboard.press('End');
    expect(await page.locator('.day-detail').textContent()).toMatch(new RegExp(`^${today()}: `));
    await page.keyboard.press('ArrowLeft');
    expect(await page.locator('.day-detail').textContent()).toMatch(/: 0 admitted, 0 limited, 0 banned$/);
    // Nothing runs off the side of the page: wide tables scroll in their own box.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await checkView(page, 'key-at-200-percent');
  });
});
