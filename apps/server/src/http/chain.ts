// One middleware made of a list, run in order: the API's chain under its base path is one router layer
// instead of one per middleware (each of which Express's router would match against the path, and trim and
// restore it around, on every request). What each middleware may do is what it may do in Express 5: call
// next() or next(error), throw, or return a promise that rejects (the error goes to the error handler).
// Written by hand: docs/decisions.md#middleware-chain.
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** A chain, with the handlers it runs (in order) for whoever needs their names (a test of the order). */
export type Chain = RequestHandler & { readonly handlers: readonly RequestHandler[] };

export function chain(handlers: RequestHandler[]): Chain {
  const run = function chain(req: Request, res: Response, done: NextFunction) {
    // Each request walks the list on its own (the position is this call's), and each middleware gets a
    // next() of its own that moves on once: a second call would run the rest of the chain again (a second
    // answer, a second store write), so it throws instead, as Hono's compose does.
    const step = (at: number) => {
      const handler = handlers[at];
      if (!handler) return done();
      let called = false;
      const next = (error?: unknown) => {
        if (called) throw new Error(`next() called twice by ${handler.name || `middleware #${at}`}`);
        called = true;
        if (error === 'route' || error === 'router') return done(); // leave the chain, as Express leaves a router
        if (error !== undefined && error !== null) return done(error);
        step(at + 1);
      };
      try {
        const result = handler(req, res, next) as unknown;
        if (result instanceof Promise)
          result.catch((rejected) => done(rejected ?? new Error('Rejected promise')));
      } catch (thrown) {
        done(thrown ?? new Error('Thrown undefined'));
      }
    };
    step(0);
  };
  return Object.assign(run, { handlers });
}
