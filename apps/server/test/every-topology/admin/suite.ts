// What the admin API's suites share (one file per operation, as src/admin/keys/, and one for the listener
// and its tokens): the app on its own listener over the project's backend, with the two admin tokens of a
// rotation, and the calls every suite makes.
import { expect } from 'vitest';
import { call, type TestServer, withServer } from '../../support/harness.js';

export const token = 'a'.repeat(40);
export const nextToken = 'b'.repeat(40);

/** Starts the server before the file's tests and stops it after (every response kept the contract). */
export function adminSuite() {
  let started: TestServer | undefined;
  withServer(
    (server) => {
      started = server;
    },
    { adminTokens: [token, nextToken], limits: { ban: { threshold: 1, seconds: 60, graceSeconds: 0 } } },
  );
  const server = () => {
    if (!started) throw new Error('the admin suite has not started');
    return started;
  };
  /** A call to the admin API as `bearer` (none: no Authorization). */
  const as =
    (bearer: string | undefined) =>
    (path: string, init: RequestInit = {}) =>
      call(`${server().adminUrl}/admin/v1${path}`, bearer, init);
  const adminCall = as(token);
  const post = (path: string, body?: unknown, headers: Record<string, string> = {}) =>
    adminCall(path, { method: 'POST', headers, ...(body !== undefined && { body: JSON.stringify(body) }) });
  const createKey = async (body: Record<string, unknown>) => {
    const res = await post('/keys', body);
    expect(res.status).toBe(201);
    return (await res.json()) as { key: { id: string; plan: string }; secret: string };
  };
  /** A key that went on past its 1 a minute and was banned (the suite bans at the first violation). */
  async function bannedKey(fields: Record<string, unknown> = {}) {
    const created = await createKey({ plan: 'enterprise', limits: { perMinute: 1, perDay: 100 }, ...fields });
    const codes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await call(`${server().url}/v1/pets`, created.secret);
      codes.push(res.status === 200 ? 'ok' : ((await res.json()) as { code: string }).code);
    }
    expect(codes).toEqual(['ok', 'rate_limited', 'temporarily_banned']);
    return created;
  }
  return {
    get server() {
      return server();
    },
    as,
    adminCall,
    post,
    createKey,
    bannedKey,
  };
}
