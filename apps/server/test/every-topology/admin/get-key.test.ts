// getKey, and every operation on one key: an unknown key is a 404, a malformed id a 400.

import { describe, expect, it } from 'vitest';
import { adminSuite } from './suite.js';

const suite = adminSuite();
const { adminCall } = suite;

describe('getKey and the operations on one key', () => {
  it.each([
    ['GET', '/keys/000000000000'],
    ['PATCH', '/keys/000000000000'],
    ['POST', '/keys/000000000000/rotate'],
    ['POST', '/keys/000000000000/revoke'],
    ['POST', '/keys/000000000000/unban'],
    ['GET', '/keys/000000000000/usage'],
  ])('%s %s of an unknown key is a 404', async (method, path) => {
    const res = await adminCall(path, { method, ...(method === 'PATCH' && { body: '{"plan":"pro"}' }) });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: 'not_found', message: expect.any(String), status: 404 });
  });

  it('refuses a malformed key id with a 400 that says what a key id is, not the pattern', async () => {
    const res = await adminCall('/keys/not-a-key');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: 'invalid_request',
      message: 'path.keyId must be a key id: 12 characters, each 0-9 or a-f',
      status: 400,
    });
  });
});
