// What the maintained instrumentations lack, over the OpenTelemetry API (a no-op without the SDK; these
// are installed only when tracing is on, so with it off nothing runs per request): the server span named
// after the contract's operationId with the caller and the limiter's outcome,
// spans for SQLite store calls and lease refills (no instrumentation exists for better-sqlite3 or our
// counters), and the trace ids on log lines. Written by hand: docs/decisions.md#server-spans.
import { type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';

declare module 'express-serve-static-core' {
  interface Locals {
    /** The rate limiter's decision for the request (api/rate-limit.ts): admitted, limited or banned. */
    rateLimit?: string;
    /** The code of the Error body the request was answered with (http/http-error.ts). */
    errorCode?: string;
  }
}

const tracer = trace.getTracer('animal-store');

/** Whether the SDK was started in this process (OTEL_EXPORTER_OTLP_ENDPOINT set). */
export const tracingOn = (): boolean => Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT);

/**
 * Second on a listener's API, after the operation is resolved (res.locals.operation): when the answer is
 * done, the request's server span (node:http's) takes the contract's operationId as its name (not the raw URL), and gets the key's public id (never its secret),
 * the rate limiter's outcome and, on a 4xx or 5xx, the Error body's code; a 5xx marks it failed.
 */
export function serverSpans(_req: Request, res: Response, next: NextFunction): void {
  const span = trace.getActiveSpan();
  // At 'finish', not through whenDone ('close'): the HTTP instrumentation ends the span when the response
  // finishes, and an ended span takes no name (tracing.test.ts fails with whenDone here).
  if (span) res.once('finish', () => nameSpan(span, res, res.locals.operation?.id ?? 'other'));
  next();
}

function nameSpan(span: Span, res: Response, operation: string): void {
  span.updateName(operation);
  span.setAttribute('animal_store.operation', operation);
  const { apiKey, rateLimit, errorCode } = res.locals;
  if (apiKey) span.setAttribute('animal_store.key_id', apiKey.id);
  if (rateLimit) span.setAttribute('animal_store.rate_limit', rateLimit);
  if (errorCode) span.setAttribute('animal_store.error_code', errorCode);
  if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode ?? 'error' });
}

/**
 * `target` with each of its methods in a child span named `<kind>.<method>` (e.g. `sqlite.pets.list`,
 * `counters.take`: a lease refill), a failure recorded on it: for what no maintained instrumentation
 * covers (better-sqlite3, the limiter's counters over any engine). Every method, so that one added to the
 * store is traced without a list to extend; what is not an operation is a property (CounterStore.epoch).
 */
export function traced<T extends object>(target: T, kind: string): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return (...args: unknown[]) =>
        tracer.startActiveSpan(`${kind}.${property}`, async (span) => {
          try {
            return await value.apply(object, args);
          } catch (error) {
            span.recordException(error as Error);
            span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).name });
            throw error;
          } finally {
            span.end();
          }
        });
    },
  });
}

/** pino's mixin: the active span's trace and span ids on every log line written inside a request. */
export function traceIds(): Record<string, string> {
  const context = trace.getActiveSpan()?.spanContext();
  return context ? { trace_id: context.traceId, span_id: context.spanId } : {};
}
