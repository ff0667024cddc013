// resetConnection on real sockets: a connection given up on ends with a TCP reset, so that what its kernel
// still holds is never delivered; over TLS it is destroyed without throwing; a closed one is left alone.
// The far end is a server of the test's own on loopback; the certificate is made by openssl.
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { toolFor } from '@animal-store/test-support';
import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { resetConnection } from './failures.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A loopback server that records how each connection it accepted ended: 'reset' or 'closed'. */
async function farEnd(wrap: (socket: Socket) => Socket = (s) => s) {
  const endings: string[] = [];
  const server = createServer((raw) => {
    raw.on('error', () => {}); // seen through `socket` (the same, or the TLS socket over it)
    const socket = wrap(raw);
    socket.on('error', (error: NodeJS.ErrnoException) =>
      endings.push(error.code === 'ECONNRESET' ? 'reset' : String(error.code)),
    );
    socket.on('end', () => endings.push('closed'));
    socket.resume();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => server.close());
  const { port } = server.address() as { port: number };
  return { port, endings };
}

/** A pool client as pg makes one: its socket at `connection.stream`. */
const clientOn = (stream: Socket) => ({ connection: { stream } }) as unknown as pg.PoolClient;

describe('resetConnection', () => {
  it('ends a plain connection with a reset', async () => {
    const far = await farEnd();
    const socket = connect(far.port, '127.0.0.1');
    await once(socket, 'connect');
    resetConnection(clientOn(socket));
    await expect.poll(() => far.endings.length).toBeGreaterThan(0);
    expect(far.endings).toEqual(['reset']);
  });

  const openssl = toolFor('the TLS reset test', 'openssl');
  it.runIf(openssl)(
    'over TLS, destroys the connection without throwing (a TLS socket cannot reset)',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'animal-store-reset-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      execFileSync(
        openssl as string,
        ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost'].concat([
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ]),
        { stdio: 'ignore' },
      );
      const context = tls.createSecureContext({
        key: readFileSync(join(dir, 'key.pem')),
        cert: readFileSync(join(dir, 'cert.pem')),
      });
      const far = await farEnd((raw) => new tls.TLSSocket(raw, { isServer: true, secureContext: context }));
      // As pg does: TLS over a TCP socket it made.
      const raw = connect(far.port, '127.0.0.1');
      await once(raw, 'connect');
      const secure = tls.connect({ socket: raw, rejectUnauthorized: false });
      await once(secure, 'secureConnect');
      expect(() => secure.resetAndDestroy()).toThrow(); // what resetConnection must not call
      expect(() => resetConnection(clientOn(secure))).not.toThrow();
      await expect.poll(() => far.endings.length).toBeGreaterThan(0);
      expect(far.endings).toEqual(['closed']);
      expect(secure.destroyed).toBe(true);
    },
  );

  it('leaves a connection that already ended alone, and a socket never connected is destroyed quietly', async () => {
    const far = await farEnd();
    const socket = connect(far.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.destroy();
    expect(() => resetConnection(clientOn(socket))).not.toThrow();
    const never = new (await import('node:net')).Socket();
    resetConnection(clientOn(never));
    expect(never.destroyed).toBe(true);
    await new Promise((r) => setTimeout(r, 50)); // an 'error' it emitted now would fail the run
  });
});
