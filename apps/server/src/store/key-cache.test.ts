// The key cache over a real SQLite store; what it answers from memory is seen by changing the store behind it.
import { describe, expect, it, vi } from 'vitest';
import { quotaFor } from '../plans.js';
import { keyCacheEntries, withKeyCache } from './key-cache.js';
import { openDatabase, sqliteStore } from './sqlite/index.js';

function setup() {
  const db = openDatabase(':memory:');
  const { keys } = sqliteStore(db);
  const revokeBehind = (id: string) =>
    db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ?').run(new Date().toISOString(), id);
  return { keys, cached: withKeyCache(keys), revokeBehind };
}

describe('withKeyCache', () => {
  it('keeps a verified key through a flood of bad tokens (refusals are kept apart)', async () => {
    const { keys, cached, revokeBehind } = setup();
    const { id, key } = await keys.create({ plan: 'free', quota: quotaFor('free') });
    expect((await cached.verify(key))?.id).toBe(id);
    for (let i = 0; i <= keyCacheEntries; i++) {
      expect(await cached.verify(`as_000000000000_${String(i).padStart(43, 'A')}`)).toBeUndefined();
    }
    revokeBehind(id);
    expect((await cached.verify(key))?.id).toBe(id); // still remembered
  });

  it('forgets a key at once when this process revokes or rotates it', async () => {
    const { keys, cached } = setup();
    const first = await keys.create({ plan: 'free', quota: quotaFor('free') });
    await cached.verify(first.key);
    await cached.revoke(first.id);
    expect(await cached.verify(first.key)).toBeUndefined();
    const second = await keys.create({ plan: 'free', quota: quotaFor('free') });
    await cached.verify(second.key);
    const rotated = (await cached.rotate(second.id, 0))?.key as string;
    expect(await cached.verify(second.key)).toBeUndefined();
    expect((await cached.verify(rotated))?.id).toBe(second.id);
  });

  it('remembers a previous secret no longer than its grace period', async () => {
    const { keys, cached } = setup();
    const { id, key } = await keys.create({ plan: 'free', quota: quotaFor('free') });
    await keys.rotate(id, 1); // behind the cache: the old secret works for 1 s more
    const graced = await cached.verify(key);
    expect(graced?.graceEndsAt).toEqual(expect.any(String));
    await expect.poll(() => cached.verify(key), { timeout: 1_100 }).toBeUndefined();
  });

  it('answers a lookup without arming a timer (the request path: pnpm bench --profile)', async () => {
    const { keys, cached } = setup();
    const { key } = await keys.create({ plan: 'free', quota: quotaFor('free') });
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      for (let i = 0; i < 3; i++) expect(await cached.verify(key)).toBeDefined();
      expect(await cached.verify('as_000000000000_nope')).toBeUndefined();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
