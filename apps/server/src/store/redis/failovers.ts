// The Sentinels' word on a failover of our primary, heard as it starts. Between the replica's promotion and
// the Sentinels' +switch-master (seconds: they reconfigure every other replica first), the old primary
// still takes writes, and the new one never sees them: counts taken there are lost, and a key is admitted
// past its limit by that much (measured: 2,800 of 6,000 admissions over a forced failover). So the
// counters stop using Redis from the failover's start (+selected-slave, sent just before the promotion)
// until it ends (+switch-master, or an abort), counting in memory meanwhile, as during an outage, and add
// what they admitted to the new primary after (limits/insured.ts, limits/leases.ts). ioredis's own
// failoverDetector moves the connection only at +switch-master.
// Written by hand: docs/decisions.md#redis-failovers.
import type { Redis } from 'ioredis';
import type { RedisAddress } from '../../redis-url.js';

/** The longest a failover holds the counters off Redis when its end is never heard (a lost message). */
export const failoverHoldMs = 10_000;

type SentinelAddress = Extract<RedisAddress, { topology: 'sentinel' }>;
/** Where the Sentinels say the primary now is (+switch-master). */
export type PrimaryAddress = { host: string; port: number };
/** `ended` is given the new primary when the Sentinels named it (+switch-master), else nothing. */
export type FailoverListener = { started(): void; ended(newPrimary?: PrimaryAddress): void };

/**
 * Subscribes to every Sentinel (each reconnecting by itself); calls `started` when one begins a failover
 * of the primary, `ended` when the Sentinels name the new primary or give up. Returns the stop.
 */
export async function watchFailovers(address: SentinelAddress, on: FailoverListener): Promise<() => void> {
  const { Redis } = await import('ioredis');
  const name = address.primaryName;
  const subscribers = address.sentinels.map(
    (sentinel) =>
      new Redis({
        ...sentinel,
        ...(address.sentinelUsername && { username: address.sentinelUsername }),
        ...(address.sentinelPassword && { password: address.sentinelPassword }),
        ...(address.tls && { tls: {} }),
        connectTimeout: 2_000,
        retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
      }) as Redis,
  );
  let hold: NodeJS.Timeout | undefined;
  const end = (newPrimary?: PrimaryAddress) => {
    if (!hold) return;
    clearTimeout(hold);
    hold = undefined;
    on.ended(newPrimary);
  };
  for (const subscriber of subscribers) {
    subscriber.on('error', () => {}); // a Sentinel down is one voice fewer; the others still speak
    subscriber.on('pmessage', (_pattern, channel: string, message: string) => {
      // +selected-slave: "slave <addr> <ip> <port> @ <primary> <ip> <port>"; +switch-master: "<primary> ..."
      const about =
        channel === '+switch-master' ? message.split(' ')[0] : message.split(' @ ')[1]?.split(' ')[0];
      if (about !== name) return;
      if (channel === '+selected-slave') {
        if (!hold) on.started();
        clearTimeout(hold);
        hold = setTimeout(() => end(), failoverHoldMs);
        hold.unref();
      } else if (channel === '+switch-master') {
        const [, , , host = '', port] = message.split(' '); // "<primary> <old ip> <old port> <new ip> <new port>"
        end({ host, port: Number(port) });
      } else {
        end();
      }
    });
    // Sent once connected; a Sentinel that restarts is subscribed again by the client itself.
    subscriber.psubscribe('+selected-slave', '+switch-master', '-failover-abort-*').catch(() => {});
  }
  return () => {
    clearTimeout(hold);
    for (const subscriber of subscribers) subscriber.disconnect();
  };
}
