// What the admin client promises to TypeScript users (checked by vitest's typecheck, never run): the
// plan decides the shape of a new key (the contract's discriminator), and a change names a field.
import { describe, expectTypeOf, it } from 'vitest';
import { createAdminClient } from './admin.js';

const admin = createAdminClient({ baseUrl: 'http://127.0.0.1:3001/admin/v1', token: 't'.repeat(40) });

describe('@animal-store/client/admin types', () => {
  it('createKey: enterprise keys carry limits, the other plans none', () => {
    expectTypeOf(admin.createKey).toBeCallableWith({ plan: 'free' });
    expectTypeOf(admin.createKey).toBeCallableWith({
      plan: 'enterprise',
      limits: { perMinute: 10, perDay: 100 },
    });
    // @ts-expect-error: an enterprise key needs its limits
    admin.createKey({ plan: 'enterprise' });
    // @ts-expect-error: a free key takes its plan's limits, no others
    admin.createKey({ plan: 'free', limits: { perMinute: 10, perDay: 100 } });
    // @ts-expect-error: no such plan
    admin.createKey({ plan: 'gold' });
  });

  it('updateKey: a change names at least one field', () => {
    expectTypeOf(admin.updateKey).toBeCallableWith('3f2a9c0b1d4e', { plan: 'pro' });
    expectTypeOf(admin.updateKey).toBeCallableWith('3f2a9c0b1d4e', { label: null });
    // @ts-expect-error: an empty change changes nothing (a 400)
    admin.updateKey('3f2a9c0b1d4e', {});
  });
});
