// Pins each item of patches/express-openapi-validator@5.6.2.patch (what and why:
// docs/decisions.md#validator-patch) and the validator's options fix, by counting calls to what each item
// spares, over real HTTP on the bundled contract.
import { once } from 'node:events';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadContract } from '../contract.js';
import { contractValidator } from './validation.js';

// What the validator calls, counted: it reads each module's export (and each class's method) at every call,
// so a count wrapped around it sees every call or construction (path-to-regexp's compilations, node:url's
// parse, its own parameter normalization, route pairs, content-type parses and parameter mutators).
const fromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
type Fn = (...args: unknown[]) => unknown;
const counts: { restore: () => void }[] = [];
function countedOn(target: Record<string, unknown>, name: string) {
  const original = target[name] as Fn;
  const count = {
    calls: 0,
    restore: () => {
      target[name] = original;
    },
  };
  target[name] = new Proxy(original, {
    apply(fn, self, args) {
      count.calls++;
      return Reflect.apply(fn, self, args);
    },
    construct(fn, args, newTarget) {
      count.calls++;
      return Reflect.construct(fn, args, newTarget);
    },
  });
  counts.push(count);
  return count;
}
const counted = (module: string, name: string) =>
  countedOn(fromValidator(module) as Record<string, unknown>, name);
const classOf = (module: string, name: string) =>
  (fromValidator(module) as Record<string, Record<string, unknown>>)[name] as Record<string, unknown>;
const compilations = counted('path-to-regexp', 'pathToRegexp');
const urlParses = counted('url', 'parse');
const normalizations = counted('./middlewares/parsers/util', 'normalizeParameter');
const routePairs = countedOn(
  classOf('./framework/openapi.context', 'OpenApiContext').prototype as Record<string, unknown>,
  'routePair',
);
const contentTypeParses = countedOn(classOf('./middlewares/util', 'ContentType'), 'fromString');
const mutators = counted('./middlewares/parsers/req.parameter.mutator', 'RequestParameterMutator');

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
  for (const count of counts) count.restore();
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

  it('looks a route up without taking its fixed parts again, and builds no parameter mutator per request', async () => {
    await fetch(`${url}/v1/pets?limit=5`);
    const [pairs, built] = [routePairs.calls, mutators.calls];
    for (let i = 0; i < 10; i++) expect((await fetch(`${url}/v1/pets?limit=5`)).status).toBe(200);
    expect(built).toBeGreaterThan(0);
    expect([routePairs.calls, mutators.calls]).toEqual([pairs, built]);
  });

  it('chooses the content type of a response once per accepted and expected types, not per response', async () => {
    await fetch(`${url}/v1/pets`);
    const before = contentTypeParses.calls;
    for (let i = 0; i < 10; i++) expect((await fetch(`${url}/v1/pets`)).status).toBe(200);
    expect(before).toBeGreaterThan(0);
    expect(contentTypeParses.calls).toBe(before);
  });

  it('keeps at most 1,000 of those choices: distinct Accept headers (a client can send any) do not grow it', async () => {
    const accept = (i: number) => `application/json, text/x-${i}`;
    const first = await fetch(`${url}/v1/pets`, { headers: { accept: accept(0) } });
    expect(first.status).toBe(200);
    const before = contentTypeParses.calls;
    expect((await fetch(`${url}/v1/pets`, { headers: { accept: accept(0) } })).status).toBe(200);
    expect(contentTypeParses.calls).toBe(before); // kept
    for (let i = 1; i <= 1_000; i++) await fetch(`${url}/v1/pets`, { headers: { accept: accept(i) } });
    // A thousand others since: the first choice is no longer kept, and is made again.
    const after = contentTypeParses.calls;
    expect((await fetch(`${url}/v1/pets`, { headers: { accept: accept(0) } })).status).toBe(200);
    expect(contentTypeParses.calls).toBeGreaterThan(after);
  });

  it('once the contract is loaded, a request passes the validator without waiting for a microtask', async () => {
    hops.length = 0;
    for (let i = 0; i < 5; i++) await fetch(`${url}/v1/pets`);
    expect(hops).toEqual([false, false, false, false, false]);
  });
});
