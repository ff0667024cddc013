// A Fastify 5 stack for the same job (job.ts): route schemas taken from the same contract (requests
// validated by Fastify's Ajv, responses serialised by fast-json-stringify from the response schemas),
// @fastify/rate-limit with a minute and a day window per key, Fastify's built-in pino logger, a prom-client
// histogram. Versions pinned in package.json. A contestant in `pnpm bench`; nothing imports it.
import { readFileSync } from 'node:fs';
import { bundledSpecPath } from '@animal-store/spec/files';
import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyRequest } from 'fastify';
import { Histogram } from 'prom-client';
import { announce, job, keyOf, notFound, unauthorized } from './job.js';

type Json = Record<string, unknown>;
const contract = JSON.parse(readFileSync(bundledSpecPath, 'utf8'));
/** A schema of the contract with its references resolved and OpenAPI's own keywords removed. */
const schema = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(schema);
  if (value === null || typeof value !== 'object') return value;
  const ref = (value as Json).$ref as string | undefined;
  if (ref)
    return schema(
      ref
        .split('/')
        .slice(1)
        .reduce((node: Json, part) => node[part] as Json, contract),
    );
  return Object.fromEntries(
    Object.entries(value as Json)
      .filter(
        ([k]) =>
          !['example', 'examples', 'deprecated', 'readOnly', 'writeOnly'].includes(k) && !k.startsWith('x-'),
      )
      .map(([k, v]) => [k, schema(v)]),
  );
};
const operation = (path: string, method: string) => contract.paths[path][method];
const querystring = (path: string) => ({
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(
    (operation(path, 'get').parameters as unknown[])
      .map(schema)
      .filter((p) => (p as Json).in === 'query')
      .map((p) => [(p as Json).name, (p as Json).schema]),
  ),
});
const json = (path: string, method: string, status: string) => {
  const response = schema(operation(path, method).responses[status]) as { content: Record<string, Json> };
  return Object.values(response.content)[0]?.schema;
};

const duration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Request duration',
  labelNames: ['method', 'route', 'status'],
});
const app = Fastify({ logger: true });
await app.register(rateLimit, { global: false });
type Keyed = FastifyRequest & { key: NonNullable<Awaited<ReturnType<typeof keyOf>>> };
const windows = (['perMinute', 'perDay'] as const).map((quota) =>
  app.createRateLimit({
    timeWindow: quota === 'perMinute' ? 60_000 : 86_400_000,
    max: (req) => (req as Keyed).key.quota[quota],
    keyGenerator: (req) => `${quota}:${(req as Keyed).key.id}`,
  }),
);
app.addHook('onRequest', async (req, reply) => {
  const key = await keyOf(req.headers.authorization);
  if (!key) return reply.code(401).send(unauthorized);
  (req as Keyed).key = key;
  for (const window of windows) {
    const result = await window(req);
    if (!result.isAllowed && result.isExceeded) {
      return reply.code(429).send({ code: 'rate_limited', message: 'slow down', status: 429 });
    }
  }
});
app.addHook('onResponse', async (req, reply) => {
  duration.observe(
    { method: req.method, route: req.routeOptions.url ?? 'unknown', status: reply.statusCode },
    reply.elapsedTime / 1000,
  );
});
app.get(
  '/v1/pets',
  { schema: { querystring: querystring('/pets'), response: { 200: json('/pets', 'get', '200') } } },
  async (req) => job.list(req.query as Json),
);
app.post(
  '/v1/pets',
  {
    schema: {
      body: schema(operation('/pets', 'post').requestBody.content['application/json'].schema) as Json,
      response: { 201: json('/pets', 'post', '201') },
    },
  },
  async (req, reply) => reply.code(201).send(await job.create(req.body as never)),
);
app.get(
  '/v1/pets/:petId',
  {
    schema: {
      response: { 200: json('/pets/{petId}', 'get', '200'), 404: json('/pets/{petId}', 'get', '404') },
    },
  },
  async (req, reply) =>
    (await job.get((req.params as { petId: string }).petId)) ?? reply.code(404).send(notFound),
);
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
announce(app.server);
