// The stop registry: the last part made stops first, a failing step keeps none after it from running, and
// the steps are told what is left of the bound.
import { describe, expect, it } from 'vitest';
import { Stops } from './stops.js';

describe('Stops', () => {
  it('runs the steps last-registered first, each once, telling each what is left of the bound', async () => {
    const stops = new Stops();
    const ran: string[] = [];
    stops.onStop(() => ran.push('engines'));
    stops.onStop(async (remainingMs) => {
      await new Promise((r) => setImmediate(r)); // a step that ends later
      ran.push(`leases (${remainingMs()} ms left)`);
    });
    stops.onStop(() => ran.push('listeners'));
    await stops.stop(() => 1_500);
    await stops.stop(); // a second stop finds nothing left to run
    expect(ran).toEqual(['listeners', 'leases (1500 ms left)', 'engines']);
  });

  it('runs every step when one fails, then throws the first failure', async () => {
    const stops = new Stops();
    const ran: string[] = [];
    stops.onStop(() => ran.push('engines'));
    stops.onStop(() => {
      throw new Error('the meter could not write');
    });
    stops.onStop(() => Promise.reject(new Error('a listener would not close')));
    await expect(stops.stop()).rejects.toThrow('a listener would not close');
    expect(ran).toEqual(['engines']);
  });
});
