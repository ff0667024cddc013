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
// Each request's own walk: the first middleware waits as long as the request asks, so that concurrent requests
// interleave; each records the steps it went through.
const steps =
  (name: string): RequestHandler =>
  (_req, res, next) => {
    res.locals.steps.push(name);
    next();
  };
app.use(
  '/interleaved',
  chain([
    async (req, res, next) => {
      res.locals.steps = ['wait'];
      await new Promise((r) => setTimeout(r, Number(req.query.wait)));
      next();
    },
    steps('second'),
    steps('third'),
    (_req, res) => {
      res.json({ steps: res.locals.steps });
    },
  ]),
);
let answered = 0;
app.use(
  '/twice',
  chain([
    (_req, _res, next) => {
      next();
      next();
    },
    (_req, res) => {
      answered++;
      res.json({ answered });
    },
  ]),
);
app.use((_req, res) => {
  res.status(404).json({ seen, left: true });
});
const late: string[] = [];
app.use(((error, _req, res, _next) => {
  if (res.headersSent) late.push((error as Error).message);
  else res.status(500).json({ seen, error: (error as Error).message });
}) satisfies ErrorRequestHandler);
const server = app.listen(0, '127.0.0.1');
let url = '';
beforeAll(async () => {
  if (!server.listening) await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
});

const get = async (query: string) => {
  seen.length = 0;
  const res = await fetch(`${url}/api?${query}`);
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

  it('walks each request on its own: concurrent requests that interleave each run every middleware once', async () => {
    const answers = await Promise.all(
      [120, 10, 60, 0].map(async (wait) => (await fetch(`${url}/interleaved?wait=${wait}`)).json()),
    );
    expect(answers).toEqual(Array(4).fill({ steps: ['wait', 'second', 'third'] }));
  });

  it('refuses a second next() from one middleware: the rest of the chain runs once', async () => {
    const res = await fetch(`${url}/twice`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ answered: 1 });
    expect(answered).toBe(1);
    expect(late).toEqual([expect.stringMatching(/^next\(\) called twice by /)]);
  });
});
