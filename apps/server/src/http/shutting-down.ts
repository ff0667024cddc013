// The mark server.ts puts on a request that arrives while its server drains (SIGTERM), for readiness to read
// (api/app.ts): readiness fails from the signal on, through the app like any answer, whatever the path's
// spelling (`/readyz/`, `/READYZ`), so that a load balancer stops sending before the listener closes.
import type { IncomingMessage } from 'node:http';

const marked = Symbol('arrived while the server drains');
type Marked = IncomingMessage & { [marked]?: true };

export function markShuttingDown(req: IncomingMessage): void {
  (req as Marked)[marked] = true;
}

export const shuttingDown = (req: IncomingMessage): boolean => (req as Marked)[marked] === true;
