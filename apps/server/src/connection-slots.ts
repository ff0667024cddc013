// Who may take one of the server's MAX_CONNECTIONS slots (server.ts). One client address holds at most
// MAX_CONNECTIONS_PER_ADDRESS connections: past it, a new one is closed at once, so a client that opens
// connections by the thousand (and reopens each one closed) cannot hold every slot and lock everyone else
// out, health probes included. A trusted proxy is not capped per address (its connections carry many
// clients), and a few addresses together could still fill every slot: so the last tenth of the slots
// (reservedSlots) go only to an address that holds none yet.
import proxyaddr from 'proxy-addr';
import type { ConnectionLimits } from './config.js';

/**
 * Whether a peer is a trusted proxy (TRUST_PROXY), whose connections carry many clients: `true` or a hop
 * count trusts every peer, a list trusts those addresses and subnets (proxy-addr, as Express reads it).
 */
function proxyTest(trust: ConnectionLimits['trustProxy']): (address: string) => boolean {
  if (trust === undefined || trust === false) return () => false;
  if (trust === true || typeof trust === 'number') return () => trust !== 0;
  const trusted = proxyaddr.compile(trust);
  return (address) => trusted(address, 0);
}

/** Of `maxConnections` slots, how many only an address that holds no connection yet may take: a tenth, at least one. */
export const reservedSlots = (maxConnections: number) => Math.max(1, Math.floor(maxConnections / 10));

/** The slots each address holds: `take` one for a new connection (false: close it), `give` it back at its close. */
export function connectionSlots(limits: ConnectionLimits) {
  const isProxy = proxyTest(limits.trustProxy);
  const shared = limits.maxConnections - reservedSlots(limits.maxConnections);
  const held = new Map<string, number>();
  return {
    /** Whether `address` may open one more connection while `open` are open in all (at most MAX_CONNECTIONS); if so, it holds it. */
    take(address: string, open: number): boolean {
      const count = (held.get(address) ?? 0) + 1;
      const capped = !isProxy(address) && count > limits.maxConnectionsPerAddress;
      if (capped || open >= limits.maxConnections || (count > 1 && open >= shared)) return false;
      held.set(address, count);
      return true;
    },
    /** A connection `address` held has closed. */
    give(address: string): void {
      const left = (held.get(address) ?? 1) - 1;
      if (left > 0) held.set(address, left);
      else held.delete(address);
    },
  };
}
