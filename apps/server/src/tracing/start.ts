// Loaded by main.ts before the service's modules, and only when OTEL_EXPORTER_OTLP_ENDPOINT is set
// (otherwise no SDK is loaded at all and nothing is done per request). The OpenTelemetry SDK, configured
// by the standard OTEL_* variables (endpoint, headers, protocol, service name, sampler), with the
// maintained instrumentations for what the service talks to: node:http (one server span per request,
// W3C traceparent honoured), pg and ioredis (a child span per statement and command). ESM modules are
// hooked by registering @opentelemetry/instrumentation's loader hook first, as its ESM support says.
import { register } from 'node:module';

register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);

const { NodeSDK } = await import('@opentelemetry/sdk-node');
const { HttpInstrumentation } = await import('@opentelemetry/instrumentation-http');
const { PgInstrumentation } = await import('@opentelemetry/instrumentation-pg');
const { IORedisInstrumentation } = await import('@opentelemetry/instrumentation-ioredis');

process.env.OTEL_SERVICE_NAME ??= 'animal-store';
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

/** Flushes and stops the SDK (the last step of a graceful stop). */
export const stopTracing = (): Promise<void> => sdk.shutdown();
