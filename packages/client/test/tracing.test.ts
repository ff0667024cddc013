// The client continues the app's trace when the app uses OpenTelemetry (an SDK registered in this test
// process: a tracer provider with an in-memory exporter, W3C trace context, async-local context): each
// call a span under the app's, each attempt (a retry too) a client span under the call's, and each
// attempt's request carries that attempt's traceparent. Against a scripted HTTP server on loopback.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient } from '../src/index.js';

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const seen: IncomingMessage[] = [];
const answers = [503, 200];
const server = createServer((req, res) => {
  seen.push(req);
  const status = answers.shift() ?? 200;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(status === 200 ? '[]' : JSON.stringify({ code: 'service_unavailable', message: 'x', status }));
});
beforeAll(async () => {
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(() => {
  server.close();
  trace.disable();
  propagation.disable();
  context.disable();
});

it("a call is a span under the app's, each attempt (a retry too) a client span with its own traceparent", async () => {
  const client = createClient({
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    apiKey: 'k',
    retry: { sleep: async () => {}, random: () => 0 },
  });
  const app = trace.getTracer('the app');
  const appSpan = app.startSpan('checkout');
  await context.with(trace.setSpan(context.active(), appSpan), () => client.listPets());
  appSpan.end();
  await provider.forceFlush();

  expect(seen).toHaveLength(2); // the 503, then the retry
  const parents = seen.map((req) =>
    /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(req.headers.traceparent)),
  );
  for (const match of parents) expect(match?.[1]).toBe(appSpan.spanContext().traceId);

  const spans = exporter.getFinishedSpans();
  const call = spans.find((s) => s.name === 'animal-store GET /v1/pets');
  const attempts = spans.filter((s) => s.name === 'HTTP GET');
  expect(call?.parentSpanContext?.spanId).toBe(appSpan.spanContext().spanId);
  expect(attempts).toHaveLength(2);
  for (const attempt of attempts) expect(attempt.parentSpanContext?.spanId).toBe(call?.spanContext().spanId);
  // each request carried its own attempt's span id as the parent the service continues from
  expect(parents.map((m) => m?.[2]).sort()).toEqual(attempts.map((a) => a.spanContext().spanId).sort());
  expect(attempts.map((a) => a.attributes['http.response.status_code']).sort()).toEqual([200, 503]);
});
