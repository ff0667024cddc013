// The API reference pages /docs serves (http/docs-page.ts), one per contract, rendered by
// `redocly build-docs` into self-contained HTML: the Redoc scripts inlined, Redoc's telemetry to
// otel.cloud.redocly.com off (REDOCLY_TELEMETRY=off is what turns it off in the page: the documented
// `disableTelemetry` option is overwritten by the CLI's own setting), and its attribution logo, which it loads from cdn.redoc.ly, replaced by a
// wordmark of our own drawing as a data: URL. The page's Content-Security-Policy allows nothing remote,
// so either request would be blocked (a console error, the logo missing); test/docs.test.ts loads both pages
// in Chromium and fails on any blocked or outside request. Written by hand:
// docs/decisions.md#docs-page.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const pages = [
  { contract: '@animal-store/spec/openapi.json', title: 'Animal Store API reference', out: 'dist/docs.html' },
  {
    contract: '@animal-store/spec/admin.json',
    title: 'Animal Store admin API reference',
    out: 'dist/admin-docs.html',
  },
];
const wordmark = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" width="52" height="14" viewBox="0 0 52 14"><text x="0" y="11" font-family="sans-serif" font-size="11" font-weight="600" fill="#e63b2e">Redocly</text></svg>',
)}`;
const remoteLogo = /https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(?:-full)?\.svg/g;
const redocly = require.resolve('@redocly/cli/bin/cli.js');

for (const page of pages) {
  execFileSync(
    process.execPath,
    [
      redocly,
      'build-docs',
      require.resolve(page.contract),
      '--inlineBundle',
      '--title',
      page.title,
      '-o',
      page.out,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, REDOCLY_TELEMETRY: 'off' } },
  );
  const html = readFileSync(page.out, 'utf8');
  if (!/__redoc_options = \{[^}]*"disableTelemetry":true/.test(html)) {
    throw new Error(`${page.out}: Redoc's telemetry is not off; see scripts/build-docs.mjs`);
  }
  if (!html.match(remoteLogo)) {
    throw new Error(`${page.out}: Redoc's logo URL was not found; see scripts/build-docs.mjs`);
  }
  writeFileSync(page.out, html.replace(remoteLogo, wordmark));
}
