// The order of the middleware under each base path is stated once, in docs/architecture.md (by the names a
// profile shows); this holds it to the running apps' stacks, so the prose cannot drift from the code.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Express } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Chain } from '../../src/http/chain.js';
import { startServer, type TestServer } from '../support/harness.js';

const architecture = readFileSync(
  fileURLToPath(new URL('../../../../docs/architecture.md', import.meta.url)),
  'utf8',
);

/** The names the list after `heading` gives, in order; an entry marked "(when …)" only when `present`. */
function documentedChain(heading: string, present: Set<string>): string[] {
  const start = architecture.indexOf(heading);
  expect(start).toBeGreaterThan(-1);
  const list = architecture.slice(start).split('\n\n')[1] ?? '';
  const entries = list.split(/\n(?=- )/);
  return entries.flatMap((entry) => {
    const names = [...(entry.split(':')[0] ?? '').matchAll(/`(\w+)`/g)].map((m) => m[1] as string);
    return entry.includes('(when ') ? names.filter((n) => present.has(n)) : names;
  });
}

/** The names of the middleware under the base path, in the order a request meets them. */
function runningChain(app: Express): string[] {
  const stack = (app as unknown as { router: { stack: { handle: Partial<Chain> }[] } }).router.stack;
  // The shell's layer that holds a list of handlers is the API's chain (http/contract-app.ts), after the
  // request log (and, on the admin listener, the headers of every answer).
  const handlers = stack.find((layer) => Array.isArray(layer.handle.handlers))?.handle.handlers ?? [];
  expect(handlers.length).toBeGreaterThan(10);
  return handlers.map((handler) => handler.name);
}

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ adminTokens: ['m'.repeat(40)], corsOrigins: ['https://app.example'] });
});
afterAll(async () => {
  await server.close();
});

describe('the middleware order in docs/architecture.md', () => {
  it('is the public app’s chain under /v1', () => {
    const running = runningChain(server.app);
    expect(running).toEqual(documentedChain('Public listener', new Set(running)));
    expect(running).toContain('corsMiddleware'); // the optional entries were seen too
  });

  it('is the admin app’s chain under /admin/v1', () => {
    const running = runningChain(server.adminApp as Express);
    expect(running).toEqual(documentedChain('Admin listener', new Set(running)));
  });
});
