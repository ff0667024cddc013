// Bare Express: the floor's work (job.ts) inside Express 5 with express.json, and nothing of ours: no
// contract validation, no rate limiting, no logging, no extra headers. The distance from the floor is what
// Express costs; the distance to the full server, our layers.
import express from 'express';
import { announce, job, keyOf, notFound, unauthorized } from './job.js';

const app = express();
app.disable('etag');
app.disable('x-powered-by');
app.use(async (req, res, next) => {
  if (!(await keyOf(req.get('authorization')))) return void res.status(401).json(unauthorized);
  next();
});
app.use(express.json({ limit: '16kb' }));
app.get('/v1/pets', async (req, res) => void res.json(await job.list(req.query)));
app.post('/v1/pets', async (req, res) => void res.status(201).json(await job.create(req.body)));
app.get('/v1/pets/:id', async (req, res) => {
  const pet = await job.get(req.params.id);
  if (pet) res.json(pet);
  else res.status(404).json(notFound);
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => announce(server));
