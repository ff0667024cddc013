// The chain runs its middleware as Express 5 would run them as layers: in order, and every way a
// middleware can fail (next(error), a throw, a rejected promise, even one rejected with nothing) reaches the
// error handler; next('router') leaves the chain. Over real HTTP.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chain } from './chain.js';

const seen: string[] = [];
const mark =
  (name: string): RequestHandler =>
  (_req, _res, next) => {
    seen.push(name);
    next();
  };
const failures: Record<string, RequestHandler> = {
  next: (_req, _res, next) => next(new Error('passed to next')),
  throw: () => {
    throw new Error('thrown');
  },
  reject: async () => {
    throw new Error('rejected');
  },
  'reject-nothing': () => Promise.reject(undefined),
};

const app = express();
app.use(
  '/api',
  chain([
    mark('first'),
    (req, _res, next) => next(req.query.leave === undefined ? undefined : 'router'),
    mark('second'),
    (req, res, next) => {
      const fail = failures[String(req.query.fail)];
      if (fail) return fail(req, res, next);
      next();
    },
    (_req, res) => {
      res.json({ seen });
    },
  ]),
);
app.use((_req, res) => {
  res.status(404).json({ seen, left: true });
});
app.use(((error, _req, res, _next) => {
  res.status(500).json({ seen, error: (error as Error).message });
}) satisfies ErrorRequestHandler);
const server = app.listen(0, '127.0.0.1');
let url = '';
beforeAll(async () => {
  if (!server.listening) await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
});
afterAll(() => {
  server.close();
});

const get = async (query: string) => {
  seen.length = 0;
  const res = await fetch(`${url}?${query}`);
  return { status: res.status, body: (await res.json()) as { seen: string[]; error?: string } };
};

describe('chain', () => {
  it('runs its middleware in order, each under the mount path', async () => {
    expect(await get('')).toEqual({ status: 200, body: { seen: ['first', 'second'] } });
  });

  it.each([
    ['next', 'passed to next'],
    ['throw', 'thrown'],
    ['reject', 'rejected'],
    ['reject-nothing', 'Rejected promise'],
  ])('passes a failure by %s to the error handler, and runs nothing after it', async (fail, message) => {
    expect(await get(`fail=${fail}`)).toEqual({
      status: 500,
      body: { seen: ['first', 'second'], error: message },
    });
  });

  it("leaves the chain on next('router'), for the layers after it", async () => {
    expect(await get('leave')).toEqual({ status: 404, body: { seen: ['first'], left: true } });
  });
});
