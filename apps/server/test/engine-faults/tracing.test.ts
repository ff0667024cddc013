// Traces, for real: the built server with OTEL_EXPORTER_OTLP_ENDPOINT pointing at an OTLP/HTTP receiver
// of this test (OTEL_EXPORTER_OTLP_PROTOCOL=http/json, decoded here), on this project's backend (this suite
// is in httpSuites). A create, a list, a 429 and a request carrying a traceparent: each a server span named
// after its operationId with the key's public id and the limiter's outcome, the store's (SQLite's or
// PostgreSQL's) and the counters' spans under it, the trace ids on the log lines, and no secret anywhere.
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
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
  for (let i = 0; i < 100 && !found(spans()); i++) await new Promise((r) => setTimeout(r, 100));
  return spans();
}

const start = processesStoppedAfterEach();
const logLines = (server: ServerProcess, msg: string) =>
  server
    .output()
    .split('\n')
    .filter((l) => l.includes(`"msg":"${msg}"`));

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

  it.each([
    ['down (nothing listens)', 'down'],
    ['answering 503', 'refusing'],
  ] as const)(
    'with the collector %s: failed exports are logged once a minute at most, and SIGTERM exits 0 within the bound, with one warning and no stack trace',
    async (_, collector) => {
      const store = await freshStore();
      const key = (await createKey(serverDist, { ...store }, ...enterprise(10_000, 100_000))).key;
      // A receiver that refuses every export (and notes what was sent to it), or a port nothing listens on.
      const paths: string[] = [];
      const refusing = createServer((req, res) => {
        paths.push(req.url ?? '');
        req.resume();
        res.writeHead(503).end();
      });
      refusing.listen(0, '127.0.0.1');
      await once(refusing, 'listening');
      const { port } = refusing.address() as AddressInfo;
      if (collector === 'down') await new Promise((r) => refusing.close(r));
      try {
        // Traced to the collector, its exports failing fast (1 s), stopping within 2 s and 1 s more.
        const traced = {
          ...store,
          NODE_ENV: 'production',
          SHUTDOWN_GRACE_SECONDS: '2',
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
        };
        const server = await start({ ...traced, OTEL_BSP_SCHEDULE_DELAY: '100' });
        const warnings = (msg: string) => logLines(server, msg);
        for (let i = 0; i < 30 && warnings('traces: the collector could not be reached').length === 0; i++) {
          expect((await call(`${server.url}/v1/pets`, key)).status).toBe(200);
          await new Promise((r) => setTimeout(r, 200));
        }
        // More failed batches, still the one line (the next one would come a minute later).
        for (let i = 0; i < 5; i++) {
          await call(`${server.url}/v1/pets`, key);
          await new Promise((r) => setTimeout(r, 200));
        }
        expect(warnings('traces: the collector could not be reached')).toHaveLength(1);
        const stopping = performance.now();
        expect(await server.stop()).toBe(0);
        expect(performance.now() - stopping).toBeLessThan(3_000); // SHUTDOWN_GRACE_SECONDS + 1 s
        expect(server.output()).toContain('"msg":"stopped"');
        expect(server.output()).not.toMatch(/\n\s+at |stack/); // no stack trace, logged or thrown
        expect(server.output()).not.toContain('Redis unreachable'); // a clean stop is no outage

        // A span still to send at the stop: with a batch held for a minute, the stop's flush is the one
        // that sends it (with 100 ms, a stop slower than that on a busy machine found nothing left to send).
        const holding = await start({ ...traced, OTEL_BSP_SCHEDULE_DELAY: '60000' });
        expect((await call(`${holding.url}/v1/pets`, key)).status).toBe(200);
        const stoppingHolding = performance.now();
        expect(await holding.stop()).toBe(0);
        expect(performance.now() - stoppingHolding).toBeLessThan(3_000);
        expect(logLines(holding, 'traces: the last spans could not be sent')).toHaveLength(1);
        expect(holding.output()).toContain('"msg":"stopped"');
        expect(holding.output()).not.toMatch(/\n\s+at |stack/);
        if (collector === 'refusing') {
          expect(paths.length).toBeGreaterThan(0);
          expect(paths.filter((p) => p !== '/v1/traces')).toEqual([]); // traces only: no OTLP metrics or logs
        }
      } finally {
        refusing.close();
      }
    },
  );

  it('with a collector that accepts and never answers, SIGTERM still exits 0 within the bound: the last spans get what the bound leaves', async () => {
    const store = await freshStore();
    const key = (await createKey(serverDist, { ...store }, ...enterprise(10_000, 100_000))).key;
    const held: Socket[] = [];
    const silent = createNetServer((socket) => held.push(socket)); // reads nothing, answers nothing
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const { port } = silent.address() as AddressInfo;
    try {
      const server = await start({
        ...store,
        NODE_ENV: 'production',
        SHUTDOWN_GRACE_SECONDS: '2',
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, // the exporter's own timeout: 10 s
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '100',
      });
      for (let i = 0; i < 5; i++) expect((await call(`${server.url}/v1/pets`, key)).status).toBe(200);
      const stopping = performance.now();
      expect(await server.stop()).toBe(0);
      expect(performance.now() - stopping).toBeLessThan(3_000); // SHUTDOWN_GRACE_SECONDS + 1 s
      expect(server.output()).toContain('"msg":"stopped"');
    } finally {
      for (const socket of held) socket.destroy();
      silent.close();
    }
  });

  it('OTLP metrics are sent when OTEL_METRICS_EXPORTER asks for them', async () => {
    const store = await freshStore();
    const paths: string[] = [];
    const collector = createServer((req, res) => {
      paths.push(req.url ?? '');
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    collector.listen(0, '127.0.0.1');
    await once(collector, 'listening');
    try {
      const { port } = collector.address() as AddressInfo;
      const server = await start({
        ...store,
        NODE_ENV: 'production',
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_METRICS_EXPORTER: 'otlp',
      });
      await call(`${server.url}/v1/pets`, undefined);
      expect(await server.stop()).toBe(0); // the meter's last reading is sent at the stop
      expect(paths).toContain('/v1/metrics');
    } finally {
      collector.close();
    }
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
