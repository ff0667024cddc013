// Bare Express: the floor's work (same bearer hash check, same store queries, same JSON) inside Express 5
// with express.json, and nothing of ours: no contract validation, no rate limiting, no logging, no extra
// headers. The distance from the floor is what Express costs; the distance to the full server, our layers.
import type { AddressInfo } from 'node:net';
import { openSqliteStore } from '@animal-store/server';
import type { PetStatus } from '@animal-store/spec';
import express from 'express';

const { pets, keys } = openSqliteStore(process.env.DATABASE_URL ?? ':memory:').store;
const unauthorized = { code: 'unauthorized', message: 'no', status: 401 };

const app = express();
app.disable('etag');
app.disable('x-powered-by');
app.use(async (req, res, next) => {
  const token = /^Bearer (\S+)$/.exec(req.get('authorization') ?? '')?.[1];
  if (!token || !(await keys.verify(token))) return void res.status(401).json(unauthorized);
  next();
});
app.use(express.json({ limit: '16kb' }));
app.get('/v1/pets', async (req, res) => {
  const status = req.query.status as PetStatus | undefined;
  const limit = Number(req.query.limit ?? 20);
  res.json((await pets.list({ limit, afterId: 0, ...(status && { status }) })).pets);
});
app.post('/v1/pets', async (req, res) => {
  res.status(201).json(await pets.create({ ...req.body, status: req.body.status ?? 'available' }, () => {}));
});
app.get('/v1/pets/:id', async (req, res) => {
  const pet = await pets.get(BigInt(req.params.id));
  if (pet) res.json(pet);
  else res.status(404).json({ code: 'not_found', message: 'no', status: 404 });
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`,
  );
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
