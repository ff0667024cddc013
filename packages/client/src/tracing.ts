// W3C trace context for an app that uses OpenTelemetry: `@opentelemetry/api` is an optional peer
// dependency, imported once on the first call. An app without it pays one failed import per process and
// nothing per call; with it but no SDK registered, the API's no-op tracer and propagator add nothing.
// With an SDK, each call is a span (`animal-store <method> <path>`) under the app's active context, and
// each attempt of it (retries included) a client span of its own under that one, whose `traceparent`
// goes on the attempt's request, so the service's span continues the app's trace. Written by hand:
// docs/decisions.md#client-traces.

type Api = typeof import('@opentelemetry/api');
let loading: Promise<Api | undefined> | undefined;
const api = (): Promise<Api | undefined> =>
  (loading ??= import('@opentelemetry/api').then(
    (module) => module,
    () => undefined,
  ));

type Send = (request: Request) => Promise<Response>;

/** Runs `body` with the error recorded and the span ended. */
async function inSpan<T>(otel: Api, span: import('@opentelemetry/api').Span, body: () => Promise<T>) {
  try {
    return await body();
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: otel.SpanStatusCode.ERROR });
    throw error;
  } finally {
    span.end();
  }
}

/** `retrying` (the retry loop over `send`) with the call and each attempt traced, when the app traces. */
export function traced(send: Send, retrying: (attempt: Send) => Send): Send {
  const plain = retrying(send);
  const tracedAttempt: Send = async (request) => {
    const otel = await api();
    if (!otel) return send(request);
    const tracer = otel.trace.getTracer('@animal-store/client');
    return tracer.startActiveSpan(
      `HTTP ${request.method}`,
      {
        kind: otel.SpanKind.CLIENT,
        attributes: { 'http.request.method': request.method, 'url.full': request.url },
      },
      (span) =>
        inSpan(otel, span, async () => {
          const headers: Record<string, string> = {};
          otel.propagation.inject(otel.context.active(), headers);
          for (const [name, value] of Object.entries(headers)) request.headers.set(name, value);
          const response = await send(request);
          span.setAttribute('http.response.status_code', response.status);
          return response;
        }),
    );
  };
  const withAttempts = retrying(tracedAttempt);
  return async (request) => {
    const otel = await api();
    if (!otel) return plain(request);
    const tracer = otel.trace.getTracer('@animal-store/client');
    const path = new URL(request.url).pathname;
    return tracer.startActiveSpan(`animal-store ${request.method} ${path}`, (span) =>
      inSpan(otel, span, () => withAttempts(request)),
    );
  };
}
