// GET /console/: the console (apps/console), a page for the people who run the plans, served by the admin
// listener only, beside the admin API it calls (same origin: no CORS, and the admin token never leaves
// it). Its files are built into dist/console (scripts/copy-console.mjs). Their policy allows nothing
// remote and no inline script or style; no page may frame them; the hashed assets are cached for good,
// the page itself never (a new release's page names its new assets).
import { fileURLToPath } from 'node:url';
import express, { type Express } from 'express';

const root = fileURLToPath(new URL('../../dist/console/', import.meta.url));

const policy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function serveConsole(app: Express): void {
  // The page's assets are named relative to /console/: the bare path is sent there.
  app.use('/console', (req, res, next) => {
    if (new URL(req.originalUrl, 'http://x').pathname === '/console') res.redirect(301, '/console/');
    else next();
  });
  app.use(
    '/console',
    express.static(root, {
      index: 'index.html',
      redirect: false,
      setHeaders(res, path) {
        res.set({
          'Content-Security-Policy': policy,
          'X-Frame-Options': 'DENY', // for browsers that do not read the CSP's frame-ancestors
          'X-Content-Type-Options': 'nosniff',
          'Referrer-Policy': 'no-referrer',
          'Cache-Control': path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
        });
      },
    }),
  );
}
