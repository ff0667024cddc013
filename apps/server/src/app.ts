// createApp: wiring only. Data flows one way: request id and log → (getPet) deprecation headers →
// identify the key → rate limit → require a key → sunset → JSON body → contract validation → handlers
// → response validation; then the JSON 404 and the error handler.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { bundledSpecPath, docsPath } from '@animal-store/spec/files';
import express, { type Express } from 'express';
import type { Logger } from 'pino';
import { identify, requireKey } from './http/authenticate.js';
import { deprecations } from './http/deprecation.js';
import { errorHandler, notFound } from './http/errors.js';
import { rateLimit } from './http/rate-limit.js';
import { requestLog } from './http/request-log.js';
import { type ContractViolation, contractValidator } from './http/validation.js';
import { createSqliteRateLimiter, type LimiterOptions } from './limits/limiter.js';
import { createCursors } from './pets/cursor.js';
import { petRoutes } from './pets/routes.js';
import { type Db, setting } from './store/database.js';
import { createKeyStore } from './store/keys.js';
import { createPetStore } from './store/pets.js';

export const basePath = '/v1';
/** Largest accepted request body; documented in the contract's conventions. */
export const bodyLimit = '16kb';

const docsPolicy = [
  "default-src 'none'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
].join('; ');

export type AppDeps = {
  db: Db;
  logger: Logger;
  limits: LimiterOptions;
  /** Express 'trust proxy' (see TRUST_PROXY): lets the per-address limit see clients behind a proxy. */
  trustProxy?: string | undefined;
  /** Called for every response that breaks the contract (it is also answered 500); logs by default. */
  onContractViolation?: (violation: ContractViolation) => void;
};

export function createApp(deps: AppDeps): Express {
  const { db, logger, limits } = deps;
  const spec = JSON.parse(readFileSync(bundledSpecPath, 'utf8')) as object;
  const keys = createKeyStore(db);
  const cursors = createCursors(setting(db, 'cursor_secret', () => randomBytes(32).toString('hex')));
  const { announce, enforce } = deprecations(basePath);
  const onViolation =
    deps.onContractViolation ??
    ((violation: ContractViolation) => logger.error({ violation }, 'response breaks the contract'));

  const app = express();
  app.disable('x-powered-by');
  if (deps.trustProxy !== undefined) app.set('trust proxy', deps.trustProxy);
  app.disable('etag'); // every /v1 response carries fresh rate-limit headers: nothing to revalidate (and it costs)
  app.use(requestLog(logger));
  app.get('/healthz', (_req, res) => {
    db.prepare('SELECT 1').get();
    res.json({ status: 'ok' });
  });
  app.get('/openapi.json', (_req, res) => {
    res.json(spec);
  });
  app.get('/docs', (_req, res) => {
    // The page is self-contained; the policy keeps it so (Redoc's attribution logo is a remote image).
    res.set('Content-Security-Policy', docsPolicy).sendFile(docsPath);
  });
  app.use(announce);
  app.use(basePath, identify(keys), rateLimit(createSqliteRateLimiter(db, limits)), requireKey);
  app.use(enforce);
  app.use(basePath, express.json({ limit: bodyLimit }));
  app.use(contractValidator(spec, onViolation));
  app.use(petRoutes(basePath, createPetStore(db), cursors));
  app.use(notFound);
  app.use(errorHandler(logger));
  return app;
}
