// The shell of both listeners' apps (api/app.ts for the public API, admin/app.ts for the admin API): an Express
// app that serves one contract. In order: the request log; under the base path, the API's chain, in the
// order given, as one layer (chain.ts); outside it, the routes the app adds (`outside`), the contract at
// /openapi.json and its reference at /docs; then the JSON 404 that says where the API is, and the error
// handler (5xx bodies checked against the contract's Error). The API comes first: its requests are the
// many, and meet no layer of the few routes outside it. No x-powered-by, no ETag: every answer carries fresh
// headers, so there is nothing to revalidate (and computing it costs).
import express, { type Express, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { TrustProxy } from '../config.js';
import { documentedQuery, type OpenApiDocument } from '../contract.js';
import type { StoreHealth } from '../ops/store-health.js';
import { chain } from './chain.js';
import { docsPage } from './docs-page.js';
import { errorHandler, notFound } from './errors.js';
import { everyAnswer } from './every-answer.js';
import { requestLog } from './request-log.js';
import type { schemaChecks } from './validation.js';

export type ContractAppParts = {
  logger: Logger;
  contract: OpenApiDocument;
  basePath: string;
  /** The reference page rendered from the contract at build time (scripts/build-docs.mjs). */
  docsPath: string;
  /** Express 'trust proxy' (TRUST_PROXY). */
  trustProxy?: TrustProxy | undefined;
  /** Routes outside the base path, before the contract's own (the public app's probes and metrics). */
  outside?: (app: Express) => void;
  /** The API under the base path: each middleware and router in the order the request meets them. */
  chain: (RequestHandler | RequestHandler[])[];
  /** Judges values against the contract's schemas (validation.ts); here, the 5xx bodies against Error. */
  checks: ReturnType<typeof schemaChecks>;
  /** Counts store failures in /metrics. */
  storeErrors: { inc(labels: { reason: string }): void };
  /** Whether the store takes writes, as every listener's requests found it (/readyz reads it). */
  health?: StoreHealth | undefined;
  /** Headers of every answer of the listener, its docs, contract and 404s included (everyAnswer). */
  headers?: Record<string, string>;
  /** Whether a client's X-Request-Id becomes the request's id (else the server makes every id). */
  clientRequestIds?: boolean;
};

export function contractApp(parts: ContractAppParts): Express {
  const { contract, basePath } = parts;
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  if (parts.trustProxy !== undefined) app.set('trust proxy', parts.trustProxy);
  if (parts.headers) app.use(everyAnswer(parts.headers));
  app.use(requestLog(parts.logger, documentedQuery(contract), parts.clientRequestIds ?? true));
  app.use(basePath, chain(parts.chain.flat()));
  parts.outside?.(app);
  app.get('/openapi.json', (_req, res) => {
    res.json(contract);
  });
  app.get('/docs', docsPage(parts.docsPath));
  app.use(notFound(basePath));
  app.use(errorHandler(parts.logger, parts.storeErrors, parts.health, (req) => parts.checks('Error', req)));
  return app;
}
