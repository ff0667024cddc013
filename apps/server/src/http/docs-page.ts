// GET /docs: an API reference page rendered from a contract by `redocly build-docs` at build time (see
// package.json), self-contained; its Content-Security-Policy keeps it so (Redoc's attribution logo is a
// remote image). Served by the public app and by the admin app, each with its own page.
import type { RequestHandler } from 'express';

const policy = [
  "default-src 'none'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
].join('; ');

export const docsPage = (path: string): RequestHandler =>
  function serveDocs(_req, res) {
    res.set('Content-Security-Policy', policy).sendFile(path);
  };
