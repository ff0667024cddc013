// The console's dev loop (docs/console.md): `pnpm --filter @animal-store/console dev`, Vite's dev server,
// serves the console's sources at /console/ and passes /admin/v1 on to a running admin listener (ADMIN_URL).
// Started here as that command starts it, against this suite's server; the page, in Chromium, signs in and
// lists the server's keys through it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, spawnUntilReady } from '@animal-store/test-support';
import { describe, expect, it } from 'vitest';
import { adminToken, chromium, consoleSuite } from './support/browser.js';

const suite = consoleSuite();
const consoleDir = fileURLToPath(new URL('../', import.meta.url));
/** The console's own Vite, the program its `dev` script runs. */
const viteManifest = createRequire(join(consoleDir, 'package.json')).resolve('vite/package.json');
const viteBin = join(
  dirname(viteManifest),
  (JSON.parse(readFileSync(viteManifest, 'utf8')) as { bin: { vite: string } }).bin.vite,
);

describe.runIf(chromium)('the console, in its dev loop', () => {
  it('Vite serves the sources and passes the admin API on: the page signs in and lists the keys', {
    timeout: 120_000,
  }, async () => {
    const { key } = await suite.admin().createKey({ plan: 'free', label: 'made for the dev loop' });
    const port = await freePort();
    const vite = await spawnUntilReady(process.execPath, [viteBin, '--port', String(port), '--strictPort'], {
      cwd: consoleDir,
      env: { ...process.env, ADMIN_URL: suite.server.adminUrl, NO_COLOR: '1' },
      ready: /Local:.*127\.0\.0\.1/,
    });
    try {
      // The admin API through Vite's proxy, as the page calls it.
      const listed = await fetch(`http://127.0.0.1:${port}/admin/v1/keys?q=${key.id}`, {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      expect(listed.status).toBe(200);
      expect(((await listed.json()) as { keys: { id: string }[] }).keys.map((k) => k.id)).toEqual([key.id]);
      // The page itself, from the sources (Vite's client is in it: this is not the built console).
      const page = await suite.newPage();
      await page.goto(`http://127.0.0.1:${port}/console/`);
      expect(await page.content()).toContain('/@vite/client');
      await page.getByLabel('Admin token').fill(adminToken);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
      await expect.poll(() => page.getByText('made for the dev loop').count()).toBeGreaterThan(0);
      expect(page.problems).toEqual([]);
    } finally {
      await vite.stop();
    }
  });
});
