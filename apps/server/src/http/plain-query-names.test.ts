// The query parsed once per request (Express 5 parses it again on every read of req.query), over real HTTP.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, expect, it } from 'vitest';
import { parseQueryOnce } from './plain-query-names.js';

const app = express();
app.use(parseQueryOnce);
app.get('/q', (req, res) => {
  const first = req.query;
  res.json({ same: first === req.query, query: req.query });
});
const server = app.listen(0, '127.0.0.1');
afterAll(() => server.close());

it('req.query is parsed once: every read is the same object, with the same values', async () => {
  if (!server.listening) await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const res = await fetch(`http://127.0.0.1:${port}/q?limit=20&id=3&id=4`);
  expect(await res.json()).toEqual({ same: true, query: { limit: '20', id: ['3', '4'] } });
});
