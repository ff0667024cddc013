// The job (job.ts) as an Express 5 app, written once for the Express contestants: the bearer check, the
// JSON body, the three routes, and an error handler answering the contract's Error shape. Each contestant
// adds its own layers around the same app: `outer` before the key check (a request log, a histogram),
// `keyed` after it and before the body is read (rate limits: a refused request's body is never parsed),
// `inner` after the body is read (validation). Bare Express adds none. ETags are off unless asked for (the
// usual stack keeps Express's default).
import express, {
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { announce, job, keyOf, notFound, unauthorized } from './job.js';

export function jobApp(
  parts: {
    outer?: RequestHandler[];
    keyed?: RequestHandler[];
    inner?: RequestHandler[];
    etag?: boolean;
  } = {},
): Express {
  const app = express();
  if (!parts.etag) app.disable('etag'); // Express computes one for every answer unless told not to
  app.disable('x-powered-by');
  for (const layer of parts.outer ?? []) app.use(layer);
  app.use(async (req, res, next) => {
    const key = await keyOf(req.get('authorization'));
    if (!key) return void res.status(401).json(unauthorized);
    res.locals.key = key;
    next();
  });
  for (const layer of parts.keyed ?? []) app.use(layer);
  app.use(express.json({ limit: '16kb' }));
  for (const layer of parts.inner ?? []) app.use(layer);
  app.get('/v1/pets', async (req, res) => void res.json(await job.list(req.query)));
  app.post('/v1/pets', async (req, res) => void res.status(201).json(await job.create(req.body)));
  app.get('/v1/pets/:petId', async (req, res) => {
    const pet = await job.get(req.params.petId as string);
    if (pet) res.json(pet);
    else res.status(404).json(notFound);
  });
  app.use(
    (error: { status?: number; message: string }, _req: Request, res: Response, _next: NextFunction) => {
      const status = error.status ?? 500;
      res.status(status).json({ code: 'invalid_request', message: error.message, status });
    },
  );
  return app;
}

/** Listens on PORT (any free one by default) on loopback, and prints the readiness line. */
export function listen(app: Express): void {
  const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => announce(server));
}
