import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { requestMetrics } from './request-metrics.js';

const names = { requests: 'x_requests_total', duration: 'x_request_duration_seconds' };
const help = { requests: 'Requests', duration: 'Time' };
const bounds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** prom-client's own Counter and Histogram, fed request by request: what the exposition must equal. */
function reference() {
  const registry = new Registry();
  const registers = [registry];
  const labelNames = ['operation', 'status'];
  const requests = new Counter({ name: names.requests, help: help.requests, labelNames, registers });
  const duration = new Histogram({
    name: names.duration,
    help: help.duration,
    labelNames,
    buckets: bounds,
    registers,
  });
  return {
    registry,
    record(operation: string, status: number, seconds: number) {
      const labels = { operation, status: String(status) };
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
  };
}

// Every bucket, its bounds exactly, beyond the last, and label sets first seen in an interleaved order.
const requests: [string, number, number][] = [
  ['listPets', 200, 0.0004],
  ['createPet', 201, 0.001],
  ['listPets', 200, 0.0011],
  ['listPets', 429, 0.0025],
  ['other', 404, 3.7],
  ...bounds.map((b, i): [string, number, number] => ['getPetById', i % 2 ? 404 : 200, b]),
  ...bounds.map((b): [string, number, number] => ['listPets', 200, b * 0.99]),
  ['createPet', 201, 0.1 + 0.2],
  ['listPets', 200, 1e-7],
];

describe('requestMetrics', () => {
  it('exposes, byte for byte, what prom-client exposes for the same requests', async () => {
    const ours = new Registry();
    const tally = requestMetrics(ours, names, help, bounds);
    const theirs = reference();
    // Empty first (no label set seen yet), then after every request.
    expect(await ours.metrics()).toBe(await theirs.registry.metrics());
    for (const [operation, status, seconds] of requests) {
      tally.record(operation, status, seconds);
      theirs.record(operation, status, seconds);
      expect(await ours.metrics()).toBe(await theirs.registry.metrics());
    }
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.registry.getMetricsAsJSON());
    // The comparison covers something: both metrics, every label set, the +Inf bucket.
    const text = await ours.metrics();
    expect(text).toContain('x_requests_total{operation="listPets",status="200"} 14');
    expect(text).toContain('x_request_duration_seconds_bucket{le="+Inf",operation="other",status="404"} 1');
    expect(text).toContain(
      'x_request_duration_seconds_bucket{le="0.001",operation="createPet",status="201"} 1',
    );
  });

  it('counts from zero again when the registry is reset', async () => {
    const ours = new Registry();
    const tally = requestMetrics(ours, names, help, bounds);
    tally.record('listPets', 200, 0.002);
    ours.resetMetrics();
    tally.record('createPet', 201, 0.002);
    const theirs = reference();
    theirs.record('createPet', 201, 0.002);
    expect(await ours.metrics()).toBe(await theirs.registry.metrics());
  });
});
