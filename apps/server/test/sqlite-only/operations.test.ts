// What an operator sees: metrics after known traffic, logs that say who, the version.
import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startServer, type TestServer, tokenParts } from '../support/harness.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer({
    limits: { ban: { threshold: 1, seconds: 120, graceSeconds: 0 }, anonymousPerMinute: 30 },
  });
});
afterAll(async () => {
  server.expectNoContractViolations();
  await server.close();
});

/** The value of one sample of the scrape, 0 when absent. */
const sample = (text: string, name: string, labels: Record<string, string>) => {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.includes(w)));
  return line ? Number(line.split(' ').at(-1)) : 0;
};

describe('GET /metrics', () => {
  it('counts requests by operation and status, decisions by plan, and bans, after known traffic', async () => {
    const key = await server.key({ perMinute: 1, perDay: 100 });
    const big = await server.key({ perMinute: 1000, perDay: 10_000 });
    await call(`${server.url}/v1/pets`, big); // listPets 200
    await call(`${server.url}/v1/pets`, big);
    await call(`${server.url}/v1/pets`, big, {
      method: 'POST',
      body: JSON.stringify({ name: 'M', categoryId: 1 }),
    });
    await call(`${server.url}/v1/pets`, big, { method: 'POST', body: JSON.stringify({ name: '' }) }); // 400
    await call(`${server.url}/v1/pets/424242`, big); // getPet 404
    await call(`${server.url}/v1/pets`, undefined); // anonymous 401
    for (let i = 0; i < 3; i++) await call(`${server.url}/v1/pets`, key); // 200, 429 limited, 429 banned
    const scrape = await fetch(`${server.url}/metrics`);
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await scrape.text();
    const requests = 'animal_store_http_requests_total';
    expect(sample(text, requests, { operation: 'listPets', status: '200' })).toBe(3);
    expect(sample(text, requests, { operation: 'createPet', status: '201' })).toBe(1);
    expect(sample(text, requests, { operation: 'createPet', status: '400' })).toBe(1);
    expect(sample(text, requests, { operation: 'getPet', status: '404' })).toBe(1);
    expect(sample(text, requests, { operation: 'listPets', status: '401' })).toBe(1);
    expect(sample(text, requests, { operation: 'listPets', status: '429' })).toBe(2);
    expect(
      sample(text, 'animal_store_http_request_duration_seconds_count', {
        operation: 'listPets',
        status: '200',
      }),
    ).toBe(3);
    const decisions = 'animal_store_rate_limit_decisions_total';
    expect(sample(text, decisions, { plan: 'enterprise', decision: 'admitted' })).toBe(6);
    expect(sample(text, decisions, { plan: 'enterprise', decision: 'banned' })).toBe(1);
    expect(sample(text, decisions, { plan: 'anonymous', decision: 'admitted' })).toBe(1);
    expect(sample(text, 'animal_store_bans_started_total', { plan: 'enterprise' })).toBe(1);
    expect(text).toMatch(/animal_store_build_info\{version="[^"]+",contract="[^"]+",backend="[a-z+]+"\} 1/);
    // For the alert rules (deploy/prometheus): the store answers, the limits are not per instance.
    expect(text).toMatch(/^animal_store_ready 1$/m);
    expect(text).toMatch(/^animal_store_rate_limits_per_instance 0$/m);
    expect(text).toContain('nodejs_eventloop_lag_seconds');
    expect(text).toContain('process_resident_memory_bytes');
    // Scraping is not an API request: not counted, not limited.
    const again = await (await fetch(`${server.url}/metrics`)).text();
    expect(sample(again, decisions, { plan: 'anonymous', decision: 'admitted' })).toBe(1);
    expect(again).not.toMatch(/operation="other"/);
  });

  it('with METRICS_TOKEN, answers only the bearer of the token', async () => {
    const guarded = await startServer({ metricsToken: 'a-long-scrape-token' });
    try {
      expect((await fetch(`${guarded.url}/metrics`)).status).toBe(401);
      // Wrong tokens: short, and of exactly the right length (only the content can refuse that one).
      for (const wrong of ['wrong', 'a-long-scrape-tokeN', 'b-long-scrape-token']) {
        const res = await fetch(`${guarded.url}/metrics`, { headers: { authorization: `Bearer ${wrong}` } });
        expect(res.status).toBe(401);
      }
      const ok = await fetch(`${guarded.url}/metrics`, {
        headers: { authorization: 'Bearer a-long-scrape-token' },
      });
      expect(ok.status).toBe(200);
    } finally {
      guarded.expectNoContractViolations();
      await guarded.close();
    }
  });
});

describe('logs that say who', () => {
  it('each request line carries the key id and the client address; a ban logs one warning with key, plan and length', async () => {
    const key = await server.key({ perMinute: 1, perDay: 100 });
    const id = tokenParts(key).id;
    for (let i = 0; i < 3; i++) await call(`${server.url}/v1/pets`, key);
    const lines = server.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    const mine = lines.filter((l) => l.msg === 'request completed' && l.keyId === id);
    expect(mine).toHaveLength(3);
    expect(mine[0]).toMatchObject({ client: '127.0.0.1', req: { method: 'GET', url: '/v1/pets' } });
    const bans = lines.filter((l) => l.level === 40 && l.keyId === id);
    expect(bans).toEqual([
      expect.objectContaining({ plan: 'enterprise', banSeconds: 120, msg: expect.stringMatching(/banned/) }),
    ]);
    expect(server.logs.join('')).not.toContain(tokenParts(key).secret);
  });

  it('a request the client leaves before its answer is logged once, marked aborted, and not counted as answered', async () => {
    const key = await server.key({ perMinute: 100, perDay: 100 });
    const createPets = async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      return text
        .split('\n')
        .filter(
          (l) => l.startsWith('animal_store_http_requests_total{') && l.includes('operation="createPet"'),
        )
        .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
    };
    const counted = await createPets();
    const { port } = new URL(server.url);
    // The body is announced but never sent: the client gives up while the server waits for it, and
    // resets the connection (a FIN alone would let the server still answer the half-closed connection
    // its 400 for the cut body, and whether that write lands first is a race).
    const socket = connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    socket.on('error', () => {});
    socket.write(
      `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${key}\r\nX-Request-Id: left-early\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"name":`,
    );
    await new Promise((r) => setTimeout(r, 200));
    socket.resetAndDestroy();
    const lines = () =>
      server.logs
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => (l.req as { id?: string } | undefined)?.id === 'left-early');
    await expect.poll(lines, { timeout: 1_000, interval: 20 }).not.toHaveLength(0);
    expect(lines()).toEqual([
      expect.objectContaining({
        msg: 'request completed',
        aborted: true,
        keyId: tokenParts(key).id,
        req: { id: 'left-early', method: 'POST', url: '/v1/pets' },
      }),
    ]);
    // The server did end the response (its 400 for the cut body went nowhere): no response counted.
    expect(await createPets()).toBe(counted);
  });
});
