// `animal-store-server --healthcheck`: one request to this configuration's own /healthz, exit 0 when it
// answers 200 and 1 otherwise; the container image's HEALTHCHECK. It reads HOST and PORT as the server
// does (config.ts), so it follows a server told to listen on `::1` or on another port.
import type { Config } from '../config.js';

/** How long the probe waits for /healthz (the image's HEALTHCHECK allows 3 s). */
const probeMs = 2_500;

/** Where a client on the same host reaches a server listening on `host`:`port`. */
export function probeUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}/healthz`;
}

/** 0 when the server configured by `config` answers /healthz with 200, else 1. */
export async function healthcheck(config: Pick<Config, 'host' | 'port'>): Promise<number> {
  try {
    const res = await fetch(probeUrl(config.host, config.port), { signal: AbortSignal.timeout(probeMs) });
    return res.ok ? 0 : 1;
  } catch {
    return 1;
  }
}
