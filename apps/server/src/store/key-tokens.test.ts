// The secret comparison must take the same time whatever the secret: it goes through timingSafeEqual,
// for a right secret, a wrong one, a revoked key and an unknown one alike (`===` or Buffer.equals would
// leak, through timing, how much of a guess was right).
import * as crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { matches, newKeyRow, newKeyToken, parseKeyToken } from './key-tokens.js';

vi.mock('node:crypto', async (original) => {
  const actual = await original<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const row = (secretHash: Buffer, revoked = false) => ({
  secret_hash: secretHash,
  revoked_at: revoked ? '2026-01-01T00:00:00.000Z' : null,
  previous_secret_hash: null,
  previous_valid_until: null,
});

describe('matches', () => {
  const { token, secretHash } = newKeyToken();
  const { secret } = parseKeyToken(token) as { secret: string };
  const wrong = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;

  it.each([
    ['the right secret', secret, row(secretHash), true],
    ['a secret one character off', wrong, row(secretHash), false],
    ['a revoked key', secret, row(secretHash, true), false],
    ['no such key', secret, undefined, false],
  ])('compares %s in constant time', (_, given, stored, expected) => {
    const comparisons = vi.mocked(crypto.timingSafeEqual).mock.calls.length;
    expect(matches(given, stored)).toBe(expected);
    expect(vi.mocked(crypto.timingSafeEqual).mock.calls.length - comparisons).toBe(1);
  });
});

describe('newKeyRow', () => {
  it('gives keys created one after another strictly increasing creation times (listKeys pages by them)', () => {
    const quota = { perMinute: 60, perDay: 1000 };
    // 50 keys in a tight loop: most share a millisecond, yet each is created after the one before.
    const times = Array.from({ length: 50 }, () => String(newKeyRow({ plan: 'free', quota }).values[7]));
    for (const [i, time] of times.entries())
      if (i > 0) expect(time > (times[i - 1] as string), time).toBe(true);
    for (const time of times) expect(new Date(time).toISOString()).toBe(time);
  });
});
