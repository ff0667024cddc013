// The waits every suite uses (waits.ts): a condition polled within a bound, an error the check throws
// never taken for "not yet" (an assertion inside a poll fails the test), a load's growth named on timeout.
import { describe, expect, it } from 'vitest';
import { grown, heldWithin, within } from './waits.js';

describe('the waits', () => {
  it('heldWithin: true once the check holds, false when it never does within the bound', async () => {
    let calls = 0;
    expect(await heldWithin(() => ++calls >= 3, { timeout: 2_000, interval: 10 })).toBe(true);
    expect(calls).toBe(3);
    expect(await heldWithin(() => false, { timeout: 100, interval: 10 })).toBe(false);
  });

  it('heldWithin and within: an error the check throws is thrown at once, not polled past', async () => {
    let calls = 0;
    const failing = async () => {
      calls++;
      expect(calls).toBe(0); // a failed assertion, as a check inside a poll makes one
      return false;
    };
    await expect(heldWithin(failing, { timeout: 5_000, interval: 10 })).rejects.toThrow(
      /expected 1 to be \+?0/,
    );
    expect(calls).toBe(1);
    await expect(within(5_000, () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    await expect(within(100, async () => false)).rejects.toThrow('not within 100 ms');
  });

  it('grown: resolves once the count grew by n from the call, and names what did not grow', async () => {
    let count = 10;
    const growing = setInterval(() => count++, 5);
    try {
      await grown(() => count, 5, { timeout: 2_000 });
      expect(count).toBeGreaterThanOrEqual(15);
    } finally {
      clearInterval(growing);
    }
    await expect(grown(() => count, 1, { timeout: 100, what: 'the writers' })).rejects.toThrow(
      /^the writers: 0 of 1 more within 100 ms$/,
    );
  });
});
