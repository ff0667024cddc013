// The usual Express stack a team would assemble in an afternoon for the same job (job.ts): Express 5,
// express-openapi-validator on requests and responses against the same contract, express-rate-limit in
// memory with a minute and a day window per key, pino-http, a prom-client histogram of request durations.
// Versions pinned in package.json: express-openapi-validator is 5.6.0, the newest release our patch does not
// touch (pnpm applies patches/express-openapi-validator@5.6.2.patch to every copy of 5.6.2 in the workspace,
// and a team would run it as released). It is a contestant in `pnpm bench`, not a reference: nothing
// imports it.
import { readFileSync } from 'node:fs';
import { bundledSpecPath } from '@animal-store/spec/files';
import express, { type NextFunction, type Request, type Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { rateLimit } from 'express-rate-limit';
import { pinoHttp } from 'pino-http';
import { Histogram } from 'prom-client';
import { announce, job, keyOf, notFound, unauthorized } from './job.js';

const contract = { ...JSON.parse(readFileSync(bundledSpecPath, 'utf8')), servers: [{ url: '/v1' }] };
const duration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Request duration',
  labelNames: ['method', 'route', 'status'],
});

const app = express();
app.disable('x-powered-by');
app.use(pinoHttp());
app.use((req, res, next) => {
  const end = duration.startTimer();
  res.on('finish', () =>
    end({ method: req.method, route: req.route?.path ?? 'unknown', status: res.statusCode }),
  );
  next();
});
app.use(async (req, res, next) => {
  const key = await keyOf(req.get('authorization'));
  if (!key) return void res.status(401).json(unauthorized);
  res.locals.key = key;
  next();
});
const perKey = (windowMs: number, quota: 'perMinute' | 'perDay') =>
  rateLimit({
    windowMs,
    limit: (_req, res) => res.locals.key.quota[quota],
    keyGenerator: (_req, res) => res.locals.key.id,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
  });
app.use(perKey(60_000, 'perMinute'), perKey(86_400_000, 'perDay'));
app.use(express.json({ limit: '16kb' }));
app.use(OpenApiValidator.middleware({ apiSpec: contract, validateRequests: true, validateResponses: true }));
app.get('/v1/pets', async (req, res) => void res.json(await job.list(req.query)));
app.post('/v1/pets', async (req, res) => void res.status(201).json(await job.create(req.body)));
app.get('/v1/pets/:petId', async (req, res) => {
  const pet = await job.get(req.params.petId as string);
  if (pet) res.json(pet);
  else res.status(404).json(notFound);
});
app.use((error: { status?: number; message: string }, _req: Request, res: Response, _next: NextFunction) => {
  const status = error.status ?? 500;
  res.status(status).json({ code: 'invalid_request', message: error.message, status });
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => announce(server));
