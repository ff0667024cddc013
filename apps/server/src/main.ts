// The process entry (the package's animal-store-server bin, `pnpm start`): the Node.js check and `.env`
// first; then OpenTelemetry, only when OTEL_EXPORTER_OTLP_ENDPOINT asks for it, started before the
// service's modules load so that its instrumentations hook them (tracing/start.ts; otherwise nothing of it
// is loaded); then the service (run.ts). Every start-up failure is one line on stderr (lifecycle.ts).
import './runtime.js';
import './env-file.js';

if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) await import('./tracing/start.js');
await import('./run.js');
