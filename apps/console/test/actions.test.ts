// The console's actions in headless Chromium, each behind its confirmation, and each one's effect seen
// through the public API: create (the secret shown once, copied, working; an Idempotency-Key sent), a plan
// change that raises X-RateLimit-Limit, the Error body's message of a refused change, a rotation whose grace
// expires (shown on the key), a disable undone, an expiry set and cleared, a revocation, an unban that ends the 429s of a ban (and one that starts a used-up minute over),
// and a confirmation cancelled by Escape.
import { call, launchChromium } from '@animal-store/test-support';
import { describe, expect, it } from 'vitest';
import {
  adminToken,
  billingToken,
  type ConsolePage,
  checkView,
  chromium,
  consoleSuite,
  recordErrors,
} from './support/browser.js';

// Bans at the first violation, as the admin API's suites do, so that a ban takes three requests.
const suite = consoleSuite({
  RATE_LIMIT_BAN_THRESHOLD: '1',
  RATE_LIMIT_BAN_SECONDS: '600',
  RATE_LIMIT_BAN_GRACE_SECONDS: '0',
});
const admin = suite.admin;
const pets = (secret: string) => call(`${suite.server.url}/v1/pets`, secret);
const codeOf = async (res: Response) =>
  res.status === 200 ? 'ok' : ((await res.json()) as { code: string }).code;
/** Changes on one instance are in force on every one within 5 s: a test waits a little longer. */
const inForce = { timeout: 10_000, interval: 250 };

async function openKey(page: ConsolePage, keyId: string) {
  await page.goto(`${suite.server.adminUrl}/console/#/keys/${keyId}`);
  await page.getByRole('heading', { name: `Key ${keyId}` }).waitFor();
}

/** The open confirmation's words, then its button pressed. */
async function confirm(page: ConsolePage, button: string): Promise<string> {
  const dialog = page.getByRole('dialog');
  const says = (await dialog.textContent()) ?? '';
  await dialog.getByRole('button', { name: button }).click();
  await dialog.waitFor({ state: 'detached' });
  return says;
}

describe.runIf(chromium)('the console, acting', () => {
  it('creates a key with an Idempotency-Key, and shows its secret once, copied as it works', async () => {
    const page = await suite.newPage();
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await suite.signIn(page);
    await page.getByRole('link', { name: 'New key' }).click();
    await page.getByLabel('Plan').selectOption('enterprise');
    await page.getByLabel('Requests a minute').fill('7');
    await page.getByLabel('Requests a day').fill('500');
    await page.getByLabel('Label (optional)').fill('from the console');
    await page.getByLabel('Customer (optional)').fill('cus_console');
    await page.getByRole('button', { name: 'Create…' }).click();
    await checkView(page, 'create-confirmation');
    const sent = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/admin/v1/keys'));
    expect(await confirm(page, 'Create')).toContain(
      'A new enterprise key (7 a minute, 500 a day) for customer cus_console, labelled “from the console”',
    );
    expect((await sent).headers()['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    const secret = await page.getByLabel('Its secret').inputValue();
    await page.getByRole('button', { name: 'Copy' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await checkView(page, 'created');
    const res = await pets(secret);
    expect([res.status, res.headers.get('x-ratelimit-limit')]).toEqual([200, '7']);
    // Once: the key's page has no secret on it.
    await page.getByRole('status').getByRole('link').click();
    await page.getByRole('heading', { name: /^Key / }).waitFor();
    expect(await page.content()).not.toContain(secret);
  });

  it('sends a create whose answer was lost again with the same Idempotency-Key: one key, said so', async () => {
    const page = await suite.newPage();
    await suite.signIn(page);
    const customerId = `cus_lost_${Date.now()}`;
    const sent: string[] = [];
    // The first create reaches the service, which creates the key; its answer is lost on the way back.
    await page.route('**/admin/v1/keys', async (route) => {
      sent.push(route.request().headers()['idempotency-key'] ?? '');
      if (sent.length > 1) return route.continue();
      await route.fetch();
      return route.abort('connectionreset');
    });
    await page.getByRole('link', { name: 'New key' }).click();
    await page.getByLabel('Customer (optional)').fill(customerId);
    await page.getByRole('button', { name: 'Create…' }).click();
    await confirm(page, 'Create');
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toMatch(/had created key [0-9a-f]{12} already/);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toBe(sent[0]);
    const keys = await admin().listKeys({ customerId });
    expect(keys.keys).toHaveLength(1);
    expect(await page.getByRole('status').getByRole('link').textContent()).toBe(keys.keys[0]?.id);
    await checkView(page, 'create-replayed', ['ERR_CONNECTION_RESET']);
  });

  it('works from a page that is not a secure context (plain http to a host name): a create, a secret to copy by hand', async () => {
    // The admin listener reached as an operator often does, over http by a name: the browser then offers
    // neither crypto.randomUUID nor the clipboard. Chromium resolves the name to the test's server.
    const browser = await launchChromium(['--host-resolver-rules=MAP console.test 127.0.0.1']);
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      recordErrors(page, problems);
      const origin = suite.server.adminUrl.replace('127.0.0.1', 'console.test');
      await page.goto(`${origin}/console/#/new`);
      expect(await page.evaluate(() => window.isSecureContext)).toBe(false);
      await page.getByLabel('Admin token').fill(adminToken);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'New key' }).waitFor();
      const sent = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/admin/v1/keys'));
      await page.getByRole('button', { name: 'Create…' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
      expect((await sent).headers()['idempotency-key']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-/);
      const secret = await page.getByLabel('Its secret').inputValue();
      expect((await pets(secret)).status).toBe(200);
      expect(await page.getByRole('button', { name: 'Copy' }).count()).toBe(0);
      expect(await page.locator('.secret').textContent()).toContain('Select it and copy it');
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it('moves a key to another plan: the public API’s X-RateLimit-Limit rises, and the key’s history says who did', async () => {
    const { key, secret } = await suite.freeKey();
    expect((await pets(secret)).headers.get('x-ratelimit-limit')).toBe('60');
    const page = await suite.newPage();
    await suite.signIn(page);
    await openKey(page, key.id);
    await page.getByLabel('Plan').selectOption('pro');
    await page.getByRole('button', { name: 'Change…' }).click();
    expect(await confirm(page, 'Change')).toContain('Plan: free → pro');
    await expect.poll(() => page.getByRole('status').textContent()).toContain(`Done: change key ${key.id}`);
    await expect.poll(() => page.locator('.facts').textContent()).toContain('300 a minute, 10,000 a day');
    await expect.poll(async () => (await pets(secret)).headers.get('x-ratelimit-limit'), inForce).toBe('300');
    // The history, from the store: the change on top (by the console's token, named in ADMIN_TOKENS), the
    // create (by the client's same token) below it.
    const history = page.getByRole('region', { name: 'History' });
    await expect
      .poll(async () => (await history.getByRole('row').allTextContents()).slice(1))
      .toEqual([
        expect.stringMatching(
          /UTC\s*support\s*changed plan free → pro; limits 60 a minute, 1,000 a day → 300 a minute, 10,000 a day/,
        ),
        expect.stringMatching(/UTC\s*support\s*created on free \(60 a minute, 1,000 a day\)/),
      ]);
    await checkView(page, 'key-history');
  });

  it('shows the Error body’s message of a change the service refuses, and changes nothing', async () => {
    const { key } = await admin().createKey({ plan: 'enterprise', limits: { perMinute: 5, perDay: 100 } });
    const page = await suite.newPage();
    await suite.signIn(page);
    await openKey(page, key.id);
    await page.getByLabel('Requests a minute').fill('500');
    await page.getByRole('button', { name: 'Change…' }).click();
    const answer = page.waitForResponse((r) => r.request().method() === 'PATCH');
    await confirm(page, 'Change');
    const body = (await (await answer).json()) as { message: string; status: number };
    expect(body.status).toBe(400);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain(body.message);
    await checkView(page, 'change-refused', [400]);
    expect((await admin().getKey(key.id)).limits).toEqual({ perMinute: 5, perDay: 100 });
  });

  it('offers no change on an untouched form, a label stored with spaces around it included; spaces alone are no change', async () => {
    const { key } = await admin().createKey({
      plan: 'free',
      label: '  padded label  ',
      customerId: 'cus_pad',
    });
    const page = await suite.newPage();
    await suite.signIn(page);
    await openKey(page, key.id);
    const change = page.getByRole('button', { name: 'Change…' });
    expect(await change.isDisabled()).toBe(true);
    await page.getByLabel('Label').fill('padded label');
    expect(await change.isDisabled()).toBe(true); // only the spaces around it: the same label
    await page.getByLabel('Label').fill('  new label ');
    await change.click();
    expect(await confirm(page, 'Change')).toContain('Label:   padded label   → new label');
    await expect.poll(async () => (await admin().getKey(key.id)).label).toBe('new label');
  });

  it('rotates a key with a grace period (presets of 1 hour, 24 hours, 7 days): the new secret works, the old one until the grace ends', async () => {
    const { key, secret: old } = await suite.freeKey();
    const page = await suite.newPage();
    await suite.signIn(page);
    await openKey(page, key.id);
    // A preset fills the grace in one press (and says it is the one chosen); a number of one's own too.
    await page.getByRole('button', { name: '24 hours' }).click();
    expect(await page.getByLabel('Grace period (seconds)').inputValue()).toBe('86400');
    expect(await page.getByRole('button', { name: '24 hours' }).getAttribute('aria-pressed')).toBe('true');
    await page.getByLabel('Grace period (seconds)').fill('8');
    expect(await page.getByRole('button', { name: '24 hours' }).getAttribute('aria-pressed')).toBe('false');
    await page.getByRole('button', { name: 'Rotate…' }).click();
    expect(await confirm(page, 'Rotate')).toMatch(
      /The current secret keeps working 8 seconds more \(until .* UTC\)/,
    );
    const secret = await page.getByLabel(`New secret of key ${key.id}`).inputValue();
    // Within the grace, both work (checked first: a loaded machine's screenshot takes a while).
    expect(secret).not.toBe(old);
    expect((await pets(secret)).status).toBe(200);
    expect((await pets(old)).status).toBe(200);
    // The key's page says until when the old secret works (the page reads the key again after an action).
    await expect
      .poll(() => page.getByTestId('previous-secret').textContent())
      .toMatch(/^works until \d{4}-.* UTC$/);
    await checkView(page, 'rotated');
    await expect.poll(async () => (await pets(old)).status, { ...inForce, timeout: 20_000 }).toBe(401);
    expect((await pets(secret)).status).toBe(200);
  });

  it('revokes a key for good: the public API refuses it, and the console offers nothing more', async () => {
    const { key, secret } = await suite.freeKey();
    const page = await suite.newPage();
    await suite.signIn(page);
    await openKey(page, key.id);
    // Escape cancels a confirmation: nothing is done.
    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    expect((await admin().getKey(key.id)).revokedAt).toBeNull();

    await page.getByRole('button', { name: 'Revoke' }).click();
    expect(await confirm(page, 'Revoke for good')).toContain('cannot be restored');
    await expect.poll(() => page.locator('.facts').textContent()).toMatch(/revoked \d{4}-/);
    expect(await page.getByRole('button', { name: /Rotate|Revoke|Change/ }).count()).toBe(0);
    await expect.poll(async () => (await pets(secret)).status, inForce).toBe(401);
  });

  it('disables a key and enables it again, and sets and clears its expiry: the public API follows, and the list says so', async () => {
    const { key, secret } = (await admin().createKey({ plan: 'free', label: 'to disable' })) as {
      key: { id: string };
      secret: string;
    };
    const page = await suite.newPage();
    await suite.signIn(page);
    await openKey(page, key.id);
    await page.getByRole('button', { name: 'Disable' }).click();
    expect(await confirm(page, 'Disable')).toContain('until it is enabled again');
    await expect.poll(() => page.getByTestId('state').textContent()).toMatch(/^disabled since \d{4}-/);
    await expect.poll(async () => codeOf(await pets(secret)), inForce).toBe('key_disabled');
    await checkView(page, 'disabled');
    await page.getByRole('button', { name: 'Enable' }).click();
    await confirm(page, 'Enable');
    await expect.poll(() => page.getByTestId('state').textContent()).toBe('active');
    await expect.poll(async () => codeOf(await pets(secret)), inForce).toBe('ok');

    // An expiry within a week: the key's state and the list say it is near; cleared, it is gone.
    const soon = new Date(Date.now() + 3 * 86_400_000).toISOString();
    const expiry = page.getByLabel(/^Expires at/);
    await expiry.fill('31 January');
    expect(await page.getByRole('button', { name: 'Set expiry' }).isDisabled()).toBe(true);
    await expiry.fill(soon);
    await page.getByRole('button', { name: 'Set expiry' }).click();
    expect(await confirm(page, 'Set the expiry')).toContain('stops opening the API at');
    await expect
      .poll(() => page.getByTestId('expires').textContent())
      .toBe(`${soon.slice(0, 10)} ${soon.slice(11, 19)} UTC`);
    expect(await page.getByTestId('state').textContent()).toMatch(/^expires \d{4}-/);
    expect((await admin().getKey(key.id)).expiresAt).toBe(soon);
    await page.goto(`${suite.server.adminUrl}/console/#/keys?q=${key.id}`);
    await expect.poll(() => page.locator('tbody tr').first().textContent()).toContain('expires ');
    await openKey(page, key.id);
    await page.getByRole('button', { name: 'No expiry' }).click();
    await confirm(page, 'Clear the expiry');
    await expect.poll(() => page.getByTestId('expires').textContent()).toBe('never');
    expect((await admin().getKey(key.id)).expiresAt).toBeNull();
  });

  it('unbans a banned key whose minute is used up: one action ends the ban and starts the minute over, as its dialog says; the focus goes to its answer', async () => {
    const { key, secret } = (await admin().createKey({
      plan: 'enterprise',
      limits: { perMinute: 1, perDay: 100 },
    })) as { key: { id: string }; secret: string };
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push(await codeOf(await pets(secret)));
    expect(codes).toEqual(['ok', 'rate_limited', 'temporarily_banned']);
    const page = await suite.newPage();
    await suite.signIn(page);
    await openKey(page, key.id);
    await expect.poll(() => page.getByTestId('ban').textContent()).toMatch(/^banned until/);
    await checkView(page, 'banned');
    // One unban: no second one that leaves the used-up minute refusing (and the key banned again soon after).
    expect(await page.getByRole('button', { name: /^Unban/ }).count()).toBe(1);
    await page.getByRole('button', { name: 'Unban', exact: true }).click();
    expect(await confirm(page, 'Unban')).toMatch(
      /ban ends now.*and its minute starts over with its whole limit: its requests are answered again/s,
    );
    await expect.poll(() => page.getByTestId('ban').textContent()).toBe('not banned');
    await expect.poll(async () => codeOf(await pets(secret)), inForce).toBe('ok');
    // The button that opened the dialog is gone with the ban: the focus is on the action's answer, not lost
    // to the page's body.
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.textContent ?? ''))
      .toContain(`Done: unban key ${key.id}`);
  });

  it('lists every key’s changes in the Audit view, filtered by a part of who, what, which key and which UTC days, the filters in the address', async () => {
    const first = (await admin(billingToken).createKey({ plan: 'free', label: 'audited' })).key.id;
    const second = (await admin().createKey({ plan: 'free' })).key.id;
    await admin().updateKey(first, { plan: 'business' });
    await admin(billingToken).revokeKey(second);
    const page = await suite.newPage();
    await suite.signIn(page);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { name: 'Audit', level: 1 }).waitFor();
    const rows = () => page.getByRole('row').allTextContents();
    // Newest first, every key's (other tests' changes below these four).
    await expect
      .poll(async () => (await rows()).slice(1, 5))
      .toEqual([
        expect.stringMatching(new RegExp(`billing${second}revoked`)),
        expect.stringMatching(new RegExp(`support${first}changed plan free → business`)),
        expect.stringMatching(new RegExp(`support${second}created on free`)),
        expect.stringMatching(new RegExp(`billing${first}created on free`)),
      ]);
    // A part of the name, in any case.
    await page.getByLabel('Who (a part of a token name)').fill('BILL');
    await page.getByLabel('What').selectOption('createKey');
    await page.getByRole('button', { name: 'Show' }).click();
    await expect.poll(() => page.url()).toContain('#/audit?actor=BILL&operation=createKey');
    expect(await page.getByLabel('What').inputValue()).toBe('createKey'); // the form says what is shown
    await expect
      .poll(async () => (await rows()).slice(1).every((row) => /billing[0-9a-f]{12}created on/.test(row)))
      .toBe(true);
    expect((await rows()).some((row) => row.includes(first))).toBe(true);
    await checkView(page, 'audit');
    // A key's id in the filter, from the address: only its changes; its id links to its page.
    await page.goto(`${suite.server.adminUrl}/console/#/audit?keyId=${second}`);
    await expect.poll(async () => (await rows()).length).toBe(3);
    // UTC days, both included: none from tomorrow on, today's two, none up to yesterday. (Each count differs
    // from the one before, so none is read off the list still shown.)
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const shown = async (range: string) => {
      await page.goto(`${suite.server.adminUrl}/console/#/audit?keyId=${second}&${range}`);
      return (await rows()).length;
    };
    await expect.poll(() => shown(`from=${day(1)}`)).toBe(0);
    expect(await page.getByText('No change matches these filters.').count()).toBe(1);
    await expect.poll(() => shown(`from=${day(0)}&to=${day(0)}`)).toBe(3);
    expect(await page.getByLabel('From (UTC day)').inputValue()).toBe(day(0));
    await expect.poll(() => shown(`to=${day(-1)}`)).toBe(0);
    await expect.poll(() => shown(`from=${day(0)}`)).toBe(3);
    await page.getByRole('link', { name: second }).first().click();
    await page.getByRole('heading', { name: `Key ${second}` }).waitFor();
  });
});
