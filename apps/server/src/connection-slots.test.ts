import { describe, expect, it } from 'vitest';
import { type ConnectionLimits, loadConfig } from './config.js';
import { connectionSlots, reservedSlots } from './connection-slots.js';

const limits = (more: Partial<ConnectionLimits>): ConnectionLimits => ({
  ...loadConfig({}).connections,
  ...more,
});

describe('connection slots', () => {
  it.each([
    [10, 1],
    [9, 1],
    [100, 10],
    [1024, 102],
  ])('of %i slots, %i are kept for an address that holds none', (slots, kept) => {
    expect(reservedSlots(slots)).toBe(kept);
  });

  it('an address holds at most its share; a closed connection gives its slot back', () => {
    const slots = connectionSlots(limits({ maxConnections: 100, maxConnectionsPerAddress: 2 }));
    expect([slots.take('a', 0), slots.take('a', 1), slots.take('a', 2)]).toEqual([true, true, false]);
    slots.give('a');
    expect(slots.take('a', 1)).toBe(true);
  });

  it.each([
    ['a list naming it', ['127.0.0.1']],
    ['a hop count', 1],
    ['true', true],
  ] as const)('a proxy trusted by %s is not capped per address', (_, trustProxy) => {
    const trust = trustProxy as ConnectionLimits['trustProxy'];
    const slots = connectionSlots(
      limits({ maxConnections: 100, maxConnectionsPerAddress: 1, trustProxy: trust }),
    );
    expect([0, 1, 2].map((open) => slots.take('127.0.0.1', open))).toEqual([true, true, true]);
  });

  it('an address a list does not name is capped', () => {
    const slots = connectionSlots(
      limits({ maxConnections: 100, maxConnectionsPerAddress: 1, trustProxy: ['127.0.0.1'] }),
    );
    expect([slots.take('10.0.0.9', 0), slots.take('10.0.0.9', 1)]).toEqual([true, false]);
  });

  it('the last tenth of the slots goes only to an address that holds none yet', () => {
    const slots = connectionSlots(limits({ maxConnections: 10, maxConnectionsPerAddress: 10 }));
    for (let open = 0; open < 9; open++) expect(slots.take('a', open)).toBe(true);
    expect(slots.take('a', 9)).toBe(false); // a holds 9: the tenth slot is kept
    expect(slots.take('b', 9)).toBe(true); // b holds none: it may take it
    expect(slots.take('c', 10)).toBe(false); // every slot is held: not even a new address gets one
  });
});
