// The two per-request metrics (requests by operation and status, and their latency histogram), counted
// in preallocated slots on the request path and handed to prom-client only when /metrics is scraped.
// prom-client's own Counter and Histogram hash the label object, validate it and look its bucket up on
// every request; here a request costs two Map lookups and three additions. The exposition is
// prom-client's, byte for byte (request-metrics.test.ts compares it with prom-client's Histogram and
// Counter fed the same requests). Written by hand: docs/decisions.md#request-metrics.
import { Counter, type Registry } from 'prom-client';

type Labels = { operation: string; status: string };
type Slot = { labels: Labels; count: number; sum: number; buckets: Float64Array };

export type RequestTally = {
  /** Counts one answered request and how long it took. */
  record(operation: string, status: number, seconds: number): void;
};

export function requestMetrics(
  registry: Registry,
  names: { requests: string; duration: string },
  help: { requests: string; duration: string },
  bounds: readonly number[],
): RequestTally {
  // One slot per operation and status, in the order they first occur (prom-client's order too).
  const slots: Slot[] = [];
  const byOperation = new Map<string, Map<number, Slot>>();
  const slotOf = (operation: string, status: number): Slot => {
    let byStatus = byOperation.get(operation);
    if (!byStatus) {
      byStatus = new Map();
      byOperation.set(operation, byStatus);
    }
    let slot = byStatus.get(status);
    if (!slot) {
      slot = {
        labels: { operation, status: String(status) },
        count: 0,
        sum: 0,
        buckets: new Float64Array(bounds.length),
      };
      byStatus.set(status, slot);
      slots.push(slot);
    }
    return slot;
  };

  new Counter({
    name: names.requests,
    help: help.requests,
    labelNames: ['operation', 'status'],
    registers: [registry],
    collect() {
      // Folded in at scrape: the counts are the slots'.
      this.reset();
      for (const slot of slots) this.inc(slot.labels, slot.count);
    },
  });
  // prom-client has no way to hand a Histogram its buckets, so this is one in the shape its get() has:
  // per label set, the cumulative buckets, +Inf, the sum and the count.
  const bucket = `${names.duration}_bucket`;
  registry.registerMetric({
    name: names.duration,
    help: help.duration,
    type: 'histogram',
    aggregator: 'sum',
    async get() {
      const values = slots.flatMap(({ labels, count, sum, buckets }) => {
        let cumulative = 0;
        return [
          ...bounds.map((le, i) => {
            cumulative += buckets[i] as number;
            return { labels: { le, ...labels }, value: cumulative, metricName: bucket, exemplar: null };
          }),
          { labels: { le: '+Inf', ...labels }, value: count, metricName: bucket, exemplar: null },
          { labels: { ...labels }, value: sum, metricName: `${names.duration}_sum`, exemplar: undefined },
          { labels: { ...labels }, value: count, metricName: `${names.duration}_count`, exemplar: undefined },
        ];
      });
      return { name: names.duration, help: help.duration, type: 'histogram', values, aggregator: 'sum' };
    },
    reset() {
      slots.length = 0;
      byOperation.clear();
    },
  } as unknown as Parameters<Registry['registerMetric']>[0]);

  return {
    record(operation, status, seconds) {
      const slot = slotOf(operation, status);
      slot.count += 1;
      slot.sum += seconds;
      // The first bucket whose bound holds it (above the last bound: only +Inf, i.e. the count).
      for (let i = 0; i < bounds.length; i++) {
        if (seconds <= (bounds[i] as number)) {
          slot.buckets[i] = (slot.buckets[i] as number) + 1;
          break;
        }
      }
    },
  };
}
