// Pins what patches/express-openapi-validator@5.6.2.patch and the validator's options fix: the route
// matchers compiled once, no promise hop per middleware once the contract is loaded, only the layers this
// service uses (no multipart, no security layer), no url.parse, and parameters normalized once. Driven
// over real HTTP on the bundled contract.
import { once } from 'node:events';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadContract } from '../contract.js';
import { contractValidator } from './validation.js';

// What the validator calls, counted: it reads each module's export at every call, so a count wrapped
// around the export sees every call (path-to-regexp's compilations, node:url's parse, its own parameter
// normalization).
const fromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
type Fn = (...args: unknown[]) => unknown;
function counted(module: string, name: string) {
  const exports = fromValidator(module) as Record<string, Fn>;
  const original = exports[name] as Fn;
  const count = {
    calls: 0,
    restore: () => {
      exports[name] = original;
    },
  };
  exports[name] = (...args: unknown[]) => {
    count.calls++;
    return original(...args);
  };
  return count;
}
const compilations = counted('path-to-regexp', 'pathToRegexp');
const urlParses = counted('url', 'parse');
const normalizations = counted('./middlewares/parsers/util', 'normalizeParameter');

const contract = loadContract();
const layers = contractValidator(contract, () => {});
/** Whether a microtask ran between the layer before the validator and the handler after it. */
const hops: boolean[] = [];
let url = '';
const server = (() => {
  const app = express();
  app.use((req, _res, next) => {
    const state = { hopped: false };
    (req as unknown as { state: typeof state }).state = state;
    queueMicrotask(() => {
      state.hopped = true;
    });
    next();
  });
  app.use(layers);
  app.get('/v1/pets', (req, res) => {
    hops.push((req as unknown as { state: { hopped: boolean } }).state.hopped);
    res.json([]);
  });
  return app.listen(0, '127.0.0.1');
})();
beforeAll(async () => {
  if (!server.listening) await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  for (const count of [compilations, urlParses, normalizations]) count.restore();
  server.close();
});

describe('express-openapi-validator as this service drives it', () => {
  it('installs only the layers it uses: path parameters, metadata, requests, responses', () => {
    expect(layers.map((layer) => layer.name)).toEqual([
      'pathParamsMiddleware',
      'metadataMiddleware',
      'requestMiddleware',
      'responseMiddleware',
    ]);
  });

  it('compiles each route matcher once, not per request', async () => {
    for (let i = 0; i < 30; i++) expect((await fetch(`${url}/v1/pets?limit=5`)).status).toBe(200);
    const routes = Object.keys(contract.paths ?? {}).length;
    expect(compilations.calls).toBeGreaterThan(0);
    expect(compilations.calls).toBeLessThanOrEqual(routes);
  });

  it('reads the raw query without url.parse, and still refuses what it refused with it', async () => {
    urlParses.calls = 0;
    for (let i = 0; i < 5; i++) expect((await fetch(`${url}/v1/pets?limit=5&status=sold`)).status).toBe(200);
    expect(urlParses.calls).toBe(0);
    // A reserved character left unencoded in a query value is still refused (the raw query is what it reads).
    const refused = await fetch(`${url}/v1/pets?status=sold/x`);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('may not contain reserved characters');
  });

  it('normalizes each parameter of an operation once, not per request', async () => {
    await fetch(`${url}/v1/pets?limit=5`); // the first request of the operation normalizes its parameters
    const before = normalizations.calls;
    for (let i = 0; i < 10; i++) await fetch(`${url}/v1/pets?limit=5&status=sold`);
    expect(before).toBeGreaterThan(0);
    expect(normalizations.calls).toBe(before);
  });

  it('once the contract is loaded, a request passes the validator without waiting for a microtask', async () => {
    hops.length = 0;
    for (let i = 0; i < 5; i++) await fetch(`${url}/v1/pets`);
    expect(hops).toEqual([false, false, false, false, false]);
  });
});
