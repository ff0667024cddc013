import { describe, expect, it } from 'vitest';
import { integerQueryParameters, loadAdminContract, loadContract, responseHeaders } from './contract.js';

describe("the server's view of the contracts", () => {
  it('reads every response header the public contract declares (what CORS lets a page read)', () => {
    expect(responseHeaders(loadContract())).toEqual([
      'Deprecation',
      'Idempotent-Replayed',
      'Link',
      'Location',
      'RateLimit',
      'RateLimit-Policy',
      'Retry-After',
      'Sunset',
      'WWW-Authenticate',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'X-Request-Id',
    ]);
  });

  it('takes the admin base path from the admin contract, and its integer query parameters', () => {
    const admin = loadAdminContract();
    expect(admin.basePath).toBe('/admin/v1');
    expect([...integerQueryParameters(admin.contract)]).toEqual(['limit']);
  });
});
