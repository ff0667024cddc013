// Loaded by main.ts before the service's modules, and only when OTEL_EXPORTER_OTLP_ENDPOINT is set
// (otherwise no SDK is loaded at all and nothing is done per request). The OpenTelemetry SDK, configured
// by the standard OTEL_* variables (endpoint, headers, protocol, service name, sampler), with the
// maintained instrumentations for what the service talks to: node:http (one server span per request,
// W3C traceparent honoured), pg and ioredis (a child span per statement and command). ESM modules are
// hooked by registering @opentelemetry/instrumentation's loader hook first, as its ESM support says.
// Traces only: OTLP metrics and logs are off unless OTEL_METRICS_EXPORTER / OTEL_LOGS_EXPORTER ask for them
// (the service's metrics are its Prometheus /metrics, its logs are on stdout).
import { register } from 'node:module';
import { DiagLogLevel, diag } from '@opentelemetry/api';
import type { Logger } from 'pino';

register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);

const { NodeSDK } = await import('@opentelemetry/sdk-node');
const { HttpInstrumentation } = await import('@opentelemetry/instrumentation-http');
const { PgInstrumentation } = await import('@opentelemetry/instrumentation-pg');
const { IORedisInstrumentation } = await import('@opentelemetry/instrumentation-ioredis');

process.env.OTEL_SERVICE_NAME ??= 'animal-store';
process.env.OTEL_METRICS_EXPORTER ??= 'none';
process.env.OTEL_LOGS_EXPORTER ??= 'none';

// What the SDK reports (a failed export, mostly) goes to the service's log as warnings, at most one line a
// minute with how many were held back: a collector that is down would otherwise write one per batch, or,
// as the SDK's default, nothing at all. Before the log exists (start-up), the first is kept for it.
// Written by hand: docs/decisions.md#server-spans.
const reportEveryMs = 60_000;
let log: Logger | undefined;
let lastAt = -Infinity;
let heldBack = 0;
let pending: string | undefined;
const report = (message: string) => {
  const text = message.split('\n')[0]?.slice(0, 300) ?? '';
  if (!log) {
    pending ??= text;
    return;
  }
  if (performance.now() - lastAt < reportEveryMs) {
    heldBack++;
    return;
  }
  lastAt = performance.now();
  log.warn(
    { problem: text, ...(heldBack > 0 && { heldBack }) },
    'traces: the collector could not be reached',
  );
  heldBack = 0;
};
/** The SDK's error handler hands over the exception as JSON (stack included): its message alone. */
const problem = (...args: unknown[]) => {
  const text = args.map(String).join(' ');
  try {
    const { message } = JSON.parse(text) as { message?: unknown };
    report(typeof message === 'string' ? message : text);
  } catch {
    report(text);
  }
};
const quiet = () => {};
diag.setLogger(
  { error: problem, warn: problem, info: quiet, debug: quiet, verbose: quiet },
  DiagLogLevel.WARN,
);

/** From here on, what the SDK reports goes to `logger` (see report). */
export function reportTo(logger: Logger): void {
  log = logger;
  if (pending) report(pending);
  pending = undefined;
}

const sdk = new NodeSDK({
  instrumentations: [
    new HttpInstrumentation({
      // Only what the service answers: its own outgoing requests (none today) would be noise.
      disableOutgoingRequestInstrumentation: true,
      // Never a header, so never an Authorization header or a key secret, on a span.
      headersToSpanAttributes: { server: { requestHeaders: [], responseHeaders: [] } },
    }),
    new PgInstrumentation({ enhancedDatabaseReporting: false }), // statements, never their values
    new IORedisInstrumentation({ dbStatementSerializer: (command) => command }), // command names only
  ],
});
sdk.start();

/** The longest a stop waits for the collector to take the last spans (a healthy one takes milliseconds). */
export const lastSpansWithinMs = 2_000;

/**
 * Sends the last spans and stops the SDK (the last step of a graceful stop), for lastSpansWithinMs and
 * what is left of the stop's bound (`leftMs`) at most: the stop never waits on a collector that is down or
 * refuses; it says so in one warning line.
 */
export async function stopTracing(leftMs: number): Promise<void> {
  const withinMs = Math.max(0, Math.min(lastSpansWithinMs, leftMs));
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    sdk.shutdown().then(
      () => undefined,
      (error: Error) => error.message,
    ),
    new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`no answer within ${withinMs} ms`), withinMs);
    }),
  ]);
  clearTimeout(timer);
  if (outcome !== undefined)
    log?.warn({ problem: outcome.split('\n')[0] }, 'traces: the last spans could not be sent');
}
