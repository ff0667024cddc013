// The HTTP server's own bounds and answers: what Node's parser refuses, timeouts, the connection cap and
// pipelining, all over raw sockets (fetch cannot send most of these).
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { TrustProxy } from '../../src/config.js';
import { call, parseRaw, rawRequest, startServer, type TestServer } from '../support/harness.js';

const open: TestServer[] = [];
const serve = async (...args: Parameters<typeof startServer>) => {
  const server = await startServer(...args);
  open.push(server);
  return server;
};
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(
    open.splice(0).map((s) => {
      s.expectNoContractViolations();
      return s.close();
    }),
  );
});

const host = 'Host: 127.0.0.1\r\n';

describe('requests the HTTP parser refuses', () => {
  it.each([
    [
      'a header section over 16 KiB',
      `GET /v1/pets HTTP/1.1\r\n${host}X-Big: ${'a'.repeat(17_000)}\r\n\r\n`,
      431,
    ],
    ['a raw space in the target', `GET /v1/pe ts HTTP/1.1\r\n${host}\r\n`, 400],
    ['a control byte in the target', `GET /v1/pets\x01 HTTP/1.1\r\n${host}\r\n`, 400],
    ['bad chunk framing', `POST /v1/pets HTTP/1.1\r\n${host}Transfer-Encoding: chunked\r\n\r\nzz\r\n`, 400],
    [
      'both Content-Length and Transfer-Encoding',
      `POST /v1/pets HTTP/1.1\r\n${host}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n`,
      400,
    ],
    ['an unknown method', `BREW /v1/pets HTTP/1.1\r\n${host}\r\n`, 501],
    [
      '2,100 empty headers before a valid Authorization',
      `GET /v1/pets HTTP/1.1\r\n${host}${'X-Empty:\r\n'.repeat(2_100)}Authorization: Bearer as_000000000000_x\r\n\r\n`,
      431,
    ],
    ['201 header lines', `GET /v1/pets HTTP/1.1\r\n${host}${'X-A: 1\r\n'.repeat(200)}\r\n`, 431],
    ['Expect: bogus', `GET /v1/pets HTTP/1.1\r\n${host}Expect: bogus\r\n\r\n`, 417],
  ])('when %s, then the Error shape, Connection: close and a request id', async (_, request, status) => {
    const server = await serve();
    const { text, closed } = await rawRequest(server.url, request);
    const res = parseRaw(text);
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers.connection).toBe('close');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body).toEqual({ code: expect.any(String), message: expect.any(String), status });
    expect(closed).toBe(true);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200); // and the server is fine
  });
});

describe('timeouts', () => {
  it('when the headers do not arrive within the headers timeout, then 408 and the connection is closed', async () => {
    const server = await serve({ connections: { headersTimeoutMs: 500, requestTimeoutMs: 1_000 } });
    const { text, closed, elapsedMs } = await rawRequest(
      server.url,
      `GET /v1/pets HTTP/1.1\r\n${host}`,
      5_000,
    );
    expect(closed).toBe(true);
    expect(elapsedMs).toBeLessThan(3_000);
    expect(parseRaw(text).body).toEqual({
      code: 'request_timeout',
      message: expect.any(String),
      status: 408,
    });
  });

  it('when a body trickles in beyond the request timeout, then 408 and the connection is closed', async () => {
    const server = await serve({ connections: { headersTimeoutMs: 500, requestTimeoutMs: 1_000 } });
    const key = await server.key({ perMinute: 100, perDay: 1000 });
    const socket = connect(Number(new URL(server.url).port), '127.0.0.1');
    sockets.push(socket);
    await once(socket, 'connect');
    let text = '';
    socket.on('data', (d) => {
      text += d;
    });
    socket.write(
      `POST /v1/pets HTTP/1.1\r\n${host}Authorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{`,
    );
    const started = Date.now();
    await once(socket, 'close');
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const server = await serve({ connections: { keepAliveTimeoutMs: 300 } });
    const { text, closed, elapsedMs } = await rawRequest(
      server.url,
      `GET /healthz HTTP/1.1\r\n${host}\r\n`,
      5_000,
    );
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(closed).toBe(true);
    expect(elapsedMs).toBeLessThan(2_000);
  });
});

/** `promise`, or a failure naming what did not happen within `ms`. */
const within = <T>(ms: number, what: string, promise: Promise<T>): Promise<T> =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms)),
  ]);

/** `count` connections from `localAddress` (a loopback address: all of 127/8 is this machine), left open. */
async function holdConnections(port: number, localAddress: string, count: number): Promise<Socket[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const socket = connect({ port, host: '127.0.0.1', localAddress });
      sockets.push(socket);
      socket.on('error', () => {});
      await within(5_000, 'connect', once(socket, 'connect'));
      return socket;
    }),
  );
}

/** The status of GET /healthz on an open connection (kept alive), 0 when it closes instead. */
async function askOn(socket: Socket): Promise<number> {
  let text = '';
  const onData = (chunk: Buffer) => {
    text += chunk;
  };
  socket.on('data', onData);
  socket.write(`GET /healthz HTTP/1.1\r\n${host}\r\n`);
  const answered = new Promise<void>((resolve) => {
    const check = () => (text.includes('\r\n\r\n') && text.includes('}') ? resolve() : undefined);
    socket.on('data', check);
    socket.once('close', () => resolve());
  });
  await within(3_000, 'an answer', answered);
  socket.off('data', onData);
  return text.startsWith('HTTP/1.1 200 ') ? 200 : 0;
}

/** The status of one GET /healthz on a new connection from `localAddress`, 0 when refused. */
async function probe(port: number, localAddress: string): Promise<number> {
  const [socket] = await holdConnections(port, localAddress, 1);
  return askOn(socket as Socket);
}

describe('connection limits', () => {
  it('answers a request on a connection beyond MAX_CONNECTIONS 503 at once, and serves again when they go', async () => {
    const server = await serve({ connections: { maxConnections: 3 } });
    const port = Number(new URL(server.url).port);
    for (let i = 0; i < 3; i++) {
      const socket = connect(port, '127.0.0.1');
      sockets.push(socket);
      await once(socket, 'connect');
    }
    const { closed, text, elapsedMs } = await rawRequest(server.url, `GET /healthz HTTP/1.1\r\n${host}\r\n`);
    expect(closed).toBe(true);
    expect(parseRaw(text).status).toBe(503);
    expect(elapsedMs).toBeLessThan(3_000); // answered and closed at once, not after the 10 s headers timeout
    for (const socket of sockets.splice(0)) socket.destroy();
    // Answered again once the server has seen the three close (at once when idle, later under load).
    await expect
      .poll(async () => (await fetch(`${server.url}/healthz`)).status, { timeout: 10_000 })
      .toBe(200);
  });

  // Twice in a full run (postgres project, loaded machine) this hung for 60 s, the second time in both
  // attempts while the waits below were bounded: so in the server's start or the last fetch, which are
  // now bounded too (a run that meets it again says which), each attempt well within the test's timeout.
  it('closes connections that send nothing within the headers timeout, so idle sockets cannot lock everyone out', {
    retry: 2,
  }, async () => {
    const server = await within(
      20_000,
      'server start',
      serve({ connections: { maxConnections: 20, headersTimeoutMs: 500, requestTimeoutMs: 1_000 } }),
    );
    const port = Number(new URL(server.url).port);
    const idle = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const socket = connect(port, '127.0.0.1');
        sockets.push(socket);
        socket.on('error', () => {});
        // Listened for from the start: under load the server may close it before `connect` is handled here.
        const closedAt = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
        await within(5_000, 'connect', once(socket, 'connect'));
        return closedAt;
      }),
    );
    const opened = Date.now();
    const closedAt = await within(5_000, 'the server to close the idle sockets', Promise.all(idle));
    for (const at of closedAt) expect(at - opened).toBeLessThan(2_000);
    expect(await probe(port, '127.0.0.1')).toBe(200);
  });

  it('one client reopening idle connections by the hundred cannot hold every slot: probes from elsewhere are answered', async () => {
    const server = await serve({
      connections: { maxConnections: 60, maxConnectionsPerAddress: 20, headersTimeoutMs: 500 },
    });
    const port = Number(new URL(server.url).port);
    // The hostile client, from 127.0.0.2 (all of 127/8 is this machine): 300 idle connections, each one
    // reopened as soon as the server closes it, for as long as the probes last (15 of them: a count, not a
    // time, so that a busy machine probes as often, only slower).
    let attacking = true;
    let opened = 0;
    const hold = (): Promise<void> =>
      new Promise((resolve) => {
        const socket = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' });
        opened++;
        socket.on('error', () => {});
        socket.once('close', () => resolve(attacking ? hold() : undefined));
        sockets.push(socket);
      });
    const attack = Promise.all(Array.from({ length: 300 }, hold));
    // A probe every 100 ms from 127.0.0.1, as a load balancer's health check would come, with a health
    // check's timeout (3 s: the storm loads the whole machine, and at 1 s CI saw 2 of 15 probes late).
    const probes: number[] = [];
    while (probes.length < 15) {
      const { text } = await rawRequest(
        server.url,
        `GET /healthz HTTP/1.1\r\n${host}Connection: close\r\n\r\n`,
        3_000,
      );
      probes.push(text.startsWith('HTTP/1.1 200 ') ? 200 : 0);
      await new Promise((r) => setTimeout(r, 100));
    }
    attacking = false;
    for (const socket of sockets.splice(0)) socket.destroy();
    await attack;
    expect(opened).toBeGreaterThan(300); // the client did reopen what was closed
    expect(probes).toEqual(Array(15).fill(200));
  });

  it('MAX_CONNECTIONS_PER_ADDRESS=1: an address holds one connection (served); a request on a second is answered 503 and it closes, a silent one closes within a second', async () => {
    const server = await serve({ connections: { maxConnections: 50, maxConnectionsPerAddress: 1 } });
    const port = Number(new URL(server.url).port);
    const [first] = await holdConnections(port, '127.0.0.3', 1);
    expect(await askOn(first as Socket)).toBe(200);
    const [second, silent] = (await holdConnections(port, '127.0.0.3', 2)) as [Socket, Socket];
    const answer = new Promise<string>((resolve) => {
      let text = '';
      second.on('data', (chunk) => {
        text += chunk;
      });
      second.once('close', () => resolve(text));
    });
    second.write(`GET /healthz HTTP/1.1\r\n${host}\r\n`);
    const refused = parseRaw(await within(3_000, 'the second connection to close', answer));
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers.connection).toBe('close');
    expect(refused.body).toEqual({
      code: 'service_unavailable',
      message: expect.stringContaining('Too many connections from this address'),
      status: 503,
    });
    expect(await within(3_000, 'the silent connection to close', once(silent, 'close'))).toBeTruthy();
    expect(await askOn(first as Socket)).toBe(200); // the first is untouched
    expect(await probe(port, '127.0.0.4')).toBe(200); // and another address has its own
  });

  it('requests on connections past MAX_CONNECTIONS_PER_ADDRESS: each answered 503, none reset', async () => {
    // A reset leaves a client unable to tell whether its request was read; one closed at once with its
    // request already sent is reset by the kernel (it was: every refused connection here).
    const server = await serve({ connections: { maxConnections: 50, maxConnectionsPerAddress: 3 } });
    const port = Number(new URL(server.url).port);
    await holdConnections(port, '127.0.0.5', 3); // the address's three, held open
    const outcomes = await Promise.all(
      Array.from(
        { length: 20 },
        () =>
          new Promise<string>((resolve) => {
            const socket = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.5' });
            sockets.push(socket);
            let text = '';
            socket.on('data', (chunk) => {
              text += chunk;
            });
            socket.once('connect', () =>
              socket.write(`GET /healthz HTTP/1.1\r\n${host}Connection: close\r\n\r\n`),
            );
            socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
            socket.once('close', () => resolve(text.slice(0, 12) || 'closed unanswered'));
          }),
      ),
    );
    expect(outcomes).toEqual(Array(20).fill('HTTP/1.1 503'));
    expect(await probe(port, '127.0.0.6')).toBe(200); // another address is served meanwhile
  });

  it.each([
    ['a list naming it', ['loopback']],
    ['a hop count (1)', 1],
    ['true', true],
  ] satisfies [string, TrustProxy][])(
    'a proxy trusted by %s is not capped per address: its connections carry many clients',
    async (_, trustProxy) => {
      const server = await serve({
        connections: { maxConnections: 50, maxConnectionsPerAddress: 3, trustProxy },
      });
      const port = Number(new URL(server.url).port);
      const held = await holdConnections(port, '127.0.0.1', 10);
      // Every one of them stays open and is served: none was closed past the third.
      expect(await Promise.all(held.map(askOn))).toEqual(Array(10).fill(200));
    },
  );

  it.each([
    ['with TRUST_PROXY=1, one address opening every connection it can', 1, [40]],
    ['four addresses opening MAX_CONNECTIONS_PER_ADDRESS each, more than the slots', undefined, [6, 6, 6, 6]],
  ] as const)(
    '%s: the last tenth of the slots stays for new addresses, a probe from another is answered',
    async (_, trustProxy, counts) => {
      const server = await serve({
        connections: {
          maxConnections: 20,
          maxConnectionsPerAddress: 6,
          headersTimeoutMs: 10_000,
          trustProxy,
        },
      });
      const port = Number(new URL(server.url).port);
      const held = await Promise.all(counts.map((n, i) => holdConnections(port, `127.0.0.${10 + i}`, n)));
      // The refused ones are closed as the server accepts them: on a loaded machine (two runs side by side,
      // all 40 still open after 200 ms) that is later than on an idle one, so wait for it, not a set time.
      const openNow = () => held.flat().filter((socket) => !socket.closed).length;
      await expect.poll(openNow, { timeout: 10_000, interval: 50 }).toBeLessThan(20);
      await new Promise((r) => setTimeout(r, 200)); // and any refusal still on its way has arrived
      const open = openNow();
      // Of 20 slots, the last two are kept for addresses that hold none: the last address to come may have
      // taken one with its first connection.
      expect(open).toBeGreaterThanOrEqual(18);
      expect(open).toBeLessThan(20);
      expect(await probe(port, '127.0.0.20')).toBe(200);
    },
  );

  it('with 9 slots, the one slot of the last tenth (at least one) stays for a new address: 8 open, a probe answered', async () => {
    const server = await serve({
      connections: {
        maxConnections: 9,
        maxConnectionsPerAddress: 100,
        headersTimeoutMs: 10_000,
        trustProxy: 1,
      },
    });
    const port = Number(new URL(server.url).port);
    const held = await holdConnections(port, '127.0.0.30', 20);
    // The refused ones closed as the server accepts them: at once when idle, later under load.
    const openNow = () => held.filter((socket) => !socket.closed).length;
    await expect.poll(openNow, { timeout: 10_000, interval: 50 }).toBeLessThanOrEqual(8);
    expect(openNow()).toBe(8);
    expect(await probe(port, '127.0.0.31')).toBe(200);
  });

  it('drops a connection that pipelines more than MAX_PIPELINED_REQUESTS without reading', async () => {
    const server = await serve({ connections: { maxPipelinedRequests: 4 } });
    const key = await server.key({ perMinute: 10_000, perDay: 100_000 });
    const one = `GET /v1/pets HTTP/1.1\r\n${host}Authorization: Bearer ${key}\r\n\r\n`;
    const { closed } = await rawRequest(server.url, one.repeat(200), 3_000);
    expect(closed).toBe(true);
    expect(server.logs.join('')).toContain('too many pipelined requests');
    // A client that pipelines a few is served in full.
    const few = await rawRequest(
      server.url,
      `${one.repeat(3)}GET /healthz HTTP/1.1\r\n${host}Connection: close\r\n\r\n`,
    );
    expect(few.text.match(/HTTP\/1\.1 200 /g)).toHaveLength(4);
    expect((await call(`${server.url}/v1/pets`, key)).status).toBe(200);
  });
});
