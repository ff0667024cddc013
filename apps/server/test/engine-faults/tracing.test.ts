// Traces, for real: the built server with OTEL_EXPORTER_OTLP_ENDPOINT pointing at an OTLP/HTTP receiver
// of this test (OTEL_EXPORTER_OTLP_PROTOCOL=http/json, decoded here), on this project's backend (this suite
// is in httpSuites). A create, a list, a 429 and a request carrying a traceparent: each a server span named
// after its operationId with the key's public id and the limiter's outcome, the store's (SQLite's or
// PostgreSQL's) and the counters' spans under it, the trace ids on the log lines, and no secret anywhere.
// What the exporter does when its collector fails is the same on any store: sqlite-only/otlp-exporter.test.ts.
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createKey, enterprise } from '@animal-store/test-support';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backend, freshStore } from '../support/backends.js';
import {
  call,
  holdWriteLock,
  processesStoppedAfterEach,
  type ServerProcess,
  serverDist,
  tokenParts,
} from '../support/harness.js';
import { heldWithin } from '../support/waits.js';

type Attribute = { key: string; value: { stringValue?: string; intValue?: string | number } };
type Span = {
  status?: { code?: number };
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Attribute[];
};

const received: unknown[] = [];
const receiver = createServer(async (req: IncomingMessage, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  if (req.url === '/v1/traces') received.push(JSON.parse(body));
  res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
});
beforeAll(async () => {
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
});
afterAll(() => receiver.close());

const spans = (): Span[] =>
  (received as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] }[]).flatMap((r) =>
    r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)),
  );
const attribute = (span: Span, key: string) => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value?.stringValue ?? value?.intValue;
};
async function spansUntil(found: (all: Span[]) => boolean) {
  // Within 10 s; what was received by then is returned either way, for the test's own assertion to show.
  await heldWithin(() => found(spans()), { timeout: 10_000 });
  return spans();
}

const start = processesStoppedAfterEach();
describe(`traces over OTLP (${backend})`, () => {
  let server: ServerProcess;
  let key: string;
  let limited: string;

  it('each request is a span named after its operation, with the store and the counters under it', async () => {
    const store = await freshStore();
    key = (await createKey(serverDist, { ...store }, ...enterprise(10_000, 100_000))).key;
    limited = (await createKey(serverDist, { ...store }, ...enterprise(1, 100))).key;
    const { port } = receiver.address() as AddressInfo;
    server = await start({
      ...store,
      NODE_ENV: 'production',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: 'animal-store-test',
    });
    const created = await call(`${server.url}/v1/pets`, key, {
      method: 'POST',
      body: JSON.stringify({ name: 'Traced', categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    expect((await call(`${server.url}/v1/pets?limit=5`, key)).status).toBe(200);
    expect((await call(`${server.url}/v1/pets`, limited)).status).toBe(200);
    const refused = await call(`${server.url}/v1/pets`, limited);
    expect(refused.status).toBe(429);
    // A caller's trace continues into ours: W3C traceparent.
    const parent = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
    await call(`${server.url}/v1/pets?limit=1`, key, {
      headers: { traceparent: `00-${parent.traceId}-${parent.spanId}-01` },
    });

    const all = await spansUntil(
      (s) => s.filter((x) => x.name === 'listPets').length >= 4 && s.some((x) => x.name === 'createPet'),
    );
    const server_ = all.filter((s) => s.kind === 2); // SPAN_KIND_SERVER
    const create = server_.find((s) => s.name === 'createPet') as Span;
    expect(create).toBeDefined();
    expect(attribute(create, 'animal_store.key_id')).toBe(tokenParts(key).id);
    expect(attribute(create, 'animal_store.rate_limit')).toBe('admitted');
    const refusal = server_.find((s) => attribute(s, 'animal_store.rate_limit') === 'limited') as Span;
    expect(refusal.name).toBe('listPets');
    expect(attribute(refusal, 'animal_store.error_code')).toBe('rate_limited');
    expect(attribute(refusal, 'animal_store.key_id')).toBe(tokenParts(limited).id);

    // Under the create's span, the store's: SQLite's by hand, PostgreSQL's by its instrumentation.
    const children = all.filter((s) => s.traceId === create.traceId && s.parentSpanId === create.spanId);
    const storeSpan = backend === 'sqlite' ? /^sqlite\.pets\.create$/ : /^pg\.query:INSERT /;
    expect(
      children.map((s) => s.name),
      JSON.stringify(children.map((s) => s.name)),
    ).toContainEqual(expect.stringMatching(storeSpan));
    // The lease refill of the first request of a key: the counters, with Redis's commands under it.
    const refill = all.find((s) => s.traceId === create.traceId && s.name === 'counters.take') as Span;
    expect(refill).toBeDefined();
    if (backend === 'postgres+redis') {
      expect(
        all.some((s) => s.parentSpanId === refill.spanId && /evalsha|eval|leaseTake/i.test(s.name)),
      ).toBe(true);
    }

    const continued = server_.find((s) => s.traceId === parent.traceId) as Span;
    expect(continued?.parentSpanId).toBe(parent.spanId);

    // No secret and no token anywhere in what was exported.
    const exported = JSON.stringify(received);
    for (const secret of [key, limited, tokenParts(key).secret, tokenParts(limited).secret]) {
      expect(exported).not.toContain(secret);
    }
    expect(exported).not.toMatch(/Bearer/i);

    // The request log line of the create carries its trace and span ids.
    const line = server
      .output()
      .split('\n')
      .find((l) => l.includes('"method":"POST"') && l.includes('request completed'));
    expect(JSON.parse(line as string)).toMatchObject({ trace_id: create.traceId });
  });

  it('without OTEL_EXPORTER_OTLP_ENDPOINT no SDK is started, and no span is sent', async () => {
    const store = await freshStore();
    const before = received.length;
    // A preload that says, at exit, whether an OpenTelemetry SDK registered itself with the API (the
    // global every SDK sets when it starts; main.ts imports the SDK only with the endpoint set).
    const probe = `data:text/javascript,${encodeURIComponent(
      "process.on('exit', () => process.stdout.write('otel-sdk-registered=' + " +
        "(globalThis[Symbol.for('opentelemetry.js.api.1')]?.trace !== undefined) + '\\n'));",
    )}`;
    const plain = await start({ ...store, NODE_ENV: 'production', NODE_OPTIONS: `--import=${probe}` });
    expect((await call(`${plain.url}/v1/pets`, undefined)).status).toBe(401);
    expect(await plain.stop()).toBe(0);
    expect(plain.output()).toContain('otel-sdk-registered=false');
    expect(received.length).toBe(before);
    // and the probe can tell: with the endpoint set, it says true
    const { port } = receiver.address() as AddressInfo;
    const traced = await start({
      ...store,
      NODE_ENV: 'production',
      NODE_OPTIONS: `--import=${probe}`,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
    expect(await traced.stop()).toBe(0);
    expect(traced.output()).toContain('otel-sdk-registered=true');
  });

  it('an admin request is a span named after its operation; a store outage is a failed span with a failed store span under it', async () => {
    const store = await freshStore();
    const key = (await createKey(serverDist, { ...store }, ...enterprise(10_000, 100_000))).key;
    const adminToken = 't'.repeat(40);
    const { port } = receiver.address() as AddressInfo;
    const traced = await start({
      ...store,
      NODE_ENV: 'production',
      ADMIN_PORT: '0',
      ADMIN_TOKENS: adminToken,
      DATABASE_STATEMENT_TIMEOUT_MS: '300',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    expect((await call(`${traced.adminUrl}/admin/v1/keys?limit=5`, adminToken)).status).toBe(200);
    expect((await call(`${traced.url}/v1/pets`, key)).status).toBe(200); // the key verified, its lease taken

    // The store stops taking writes: PostgreSQL's table locked past the statement timeout, or SQLite's
    // write lock held by another process past the 5 s busy wait.
    const create = () =>
      call(`${traced.url}/v1/pets`, key, {
        method: 'POST',
        body: JSON.stringify({ name: 'Out', categoryId: 1 }),
      });
    if (backend === 'sqlite') {
      const holder = await holdWriteLock(store.DATABASE_URL, 6_500);
      try {
        expect((await create()).status).toBe(503);
      } finally {
        holder.kill('SIGKILL');
      }
    } else {
      const holder = new pg.Client({ connectionString: store.DATABASE_URL });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('LOCK TABLE pets IN ACCESS EXCLUSIVE MODE');
        expect((await create()).status).toBe(503);
        await holder.query('ROLLBACK');
      } finally {
        await holder.end();
      }
    }

    const all = await spansUntil(
      (s) =>
        s.some((x) => x.name === 'listKeys') && s.some((x) => x.name === 'createPet' && x.status?.code === 2),
    );
    const listKeys = all.find((s) => s.name === 'listKeys' && s.kind === 2) as Span;
    expect(listKeys).toBeDefined();
    const failed = all.find((s) => s.name === 'createPet' && s.status?.code === 2) as Span;
    expect(attribute(failed, 'animal_store.error_code')).toBe('service_unavailable');
    const storeFailure = all.find(
      (s) => s.traceId === failed.traceId && s.spanId !== failed.spanId && s.status?.code === 2,
    );
    // On SQLite the write lock stops the limiter's take too when the request needs one (its lease's points
    // went back leaseMs after the grant): either store span is the failure under the request's.
    expect(storeFailure?.name).toMatch(
      backend === 'sqlite' ? /^(sqlite\.pets\.create|counters\.take)$/ : /^pg\.query:/,
    );
    expect(JSON.stringify(received)).not.toContain(adminToken);
  }, 30_000);
});
