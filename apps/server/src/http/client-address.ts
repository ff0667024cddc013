// Who the client is, by address, for the per-address limit and the request log.
import { isIP } from 'node:net';
import type { Request } from 'express';

/**
 * The client's address for the per-address limit: Express's `req.ip` (X-Forwarded-For from a trusted
 * proxy) when it is a real address, else the connection's peer. A forwarded value that is not an address
 * would otherwise be a key of the client's choosing, of any length.
 */
export function clientAddress(req: Request): string {
  // req.ip only behind a trusted proxy (TRUST_PROXY): without one it is the peer, found only after parsing
  // X-Forwarded-For to ignore it, on every request.
  if (req.app.get('trust proxy') && req.ip !== undefined && isIP(req.ip)) return req.ip;
  return req.socket.remoteAddress ?? 'unknown';
}
