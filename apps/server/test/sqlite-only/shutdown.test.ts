// The built server as a process under signals and connections: SIGTERM and the drain, keep-alive
// connections, saturation in /metrics, and output that nobody reads.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Agent, type IncomingHttpHeaders, request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createKey, freePort } from '@animal-store/test-support';
import { describe, expect, it, vi } from 'vitest';
import { processesStoppedAfterEach, serverDist, tempDatabase } from '../support/harness.js';
import { heldWithin } from '../support/waits.js';

/** A fresh database holding one key made by the key command. */
async function databaseWithKey(plan = 'free') {
  const databasePath = tempDatabase();
  const { key } = await createKey(serverDist, { DATABASE_URL: databasePath }, '--plan', plan);
  return { databasePath, key };
}

const start = processesStoppedAfterEach();

/** A GET of `path` through `agent` (its kept-alive connections): the status, headers and body. */
const get = (agent: Agent, base: string, path: string) =>
  new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>((resolve, reject) => {
    request(new URL(path, base), { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    })
      .on('error', reject)
      .end();
  });

/** A POST on a raw connection whose body is held back after 5 bytes: `finish` sends the rest; `answer` is the reply. */
async function postHalfSent(url: string, path: string, token: string, body: string) {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  let text = '';
  socket.on('data', (d) => {
    text += d;
  });
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`,
  );
  return {
    finish: () => socket.end(body.slice(5)),
    answer: once(socket, 'close').then(() => text),
  };
}

describe('SIGTERM', () => {
  it('sent the moment the readiness line is read, drains and exits 0: ten starts out of ten', async () => {
    // Killed from the output's own data event, with no polling in between. The handlers are installed
    // before the line is printed: after it, 12 of 20 such starts were killed outright.
    const codes: (number | null)[] = [];
    for (let i = 0; i < 10; i++) {
      const child = spawn(process.execPath, [join(serverDist, 'main.js')], {
        env: {
          PATH: process.env.PATH ?? '',
          PORT: '0',
          HOST: '127.0.0.1',
          NODE_ENV: 'production',
          DATABASE_URL: tempDatabase(),
        },
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      const exited = once(child, 'exit');
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk;
        if (output.includes('"msg":"listening"') && child.exitCode === null) child.kill('SIGTERM');
      });
      codes.push((await exited)[0] as number | null);
    }
    expect(codes).toEqual(Array(10).fill(0));
    // What is checked is each exit, not how long ten starts take: beside two busy cores they took over 60 s.
  }, 180_000);

  it('finishes requests in flight when the signal comes, on the public and the admin listener, then exits 0', async () => {
    const { databasePath, key } = await databaseWithKey('free');
    const adminToken = 'sigterm-test-admin-token-0123456789abcdef';
    const server = await start({
      DATABASE_URL: databasePath,
      NODE_ENV: 'production',
      ADMIN_PORT: '0',
      ADMIN_TOKENS: adminToken,
    });
    // A POST on each listener whose body is still arriving when SIGTERM is sent.
    const pet = await postHalfSent(
      server.url,
      '/v1/pets',
      key,
      JSON.stringify({ name: 'Late', categoryId: 1 }),
    );
    const created = await postHalfSent(
      server.adminUrl as string,
      '/admin/v1/keys',
      adminToken,
      JSON.stringify({ plan: 'pro' }),
    );
    await new Promise((r) => setTimeout(r, 200));
    const exit = server.stop();
    await new Promise((r) => setTimeout(r, 200));
    expect(server.child.exitCode).toBeNull(); // still draining
    pet.finish();
    const petAnswer = await pet.answer;
    expect(petAnswer).toMatch(/^HTTP\/1\.1 201 Created/);
    expect(petAnswer).toContain('"name":"Late"');
    // The public listener is drained; the admin request is still in flight, and waited for.
    await new Promise((r) => setTimeout(r, 300));
    expect(server.child.exitCode).toBeNull();
    created.finish();
    const keyAnswer = await created.answer;
    expect(keyAnswer).toMatch(/^HTTP\/1\.1 201 Created/);
    expect(keyAnswer).toContain('"plan":"pro"');
    expect(await exit).toBe(0);
    expect(server.output()).toContain('"msg":"stopped"');
  });
});

/** Raw connections to `url`, each with its own answer text and whether it was reset. */
async function rawClients(url: string, count: number) {
  const { hostname, port } = new URL(url);
  return Promise.all(
    Array.from({ length: count }, async () => {
      const socket = connect(Number(port), hostname);
      const client = {
        socket,
        text: '',
        reset: false,
        closed: new Promise((r) => socket.once('close', r)),
        /** Until `count` answers have come on it (a busy machine answers late), or 10 s have passed. */
        async answered(count = 1) {
          const came = () => (client.text.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0) >= count;
          await heldWithin(came, { timeout: 10_000, interval: 10 });
        },
      };
      socket.on('data', (d) => {
        client.text += d;
      });
      socket.on('error', () => {
        client.reset = true;
      });
      await once(socket, 'connect');
      return client;
    }),
  );
}

describe('saturation in /metrics (the alert rules read it)', () => {
  it('counts open connections against MAX_CONNECTIONS, and store calls waiting for a connection', async () => {
    const server = await start({
      DATABASE_URL: tempDatabase(),
      NODE_ENV: 'production',
      MAX_CONNECTIONS: '50',
    });
    const held = await rawClients(server.url, 3);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const value = (line: string) =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(`${line} `))
          ?.split(' ')[1],
      );
    expect(value('animal_store_http_connections{listener="public"}')).toBeGreaterThanOrEqual(4); // 3 + the scrape
    expect(value('animal_store_http_connections_max{listener="public"}')).toBe(50);
    expect(value('animal_store_store_waiting')).toBe(0);
    for (const c of held) c.socket.destroy();
  });
});

describe('an idle keep-alive connection, by default', () => {
  it('outlives the 4 to 5 s that common client pools keep theirs: a request on it after 5.5 s idle is answered on it', async () => {
    // The headers and request timeouts low, so that it shows neither ends an idle connection either.
    const env = { HEADERS_TIMEOUT_SECONDS: '2', REQUEST_TIMEOUT_SECONDS: '2' };
    const server = await start({ DATABASE_URL: tempDatabase(), NODE_ENV: 'production', ...env });
    const [client] = await rawClients(server.url, 1);
    if (!client) throw new Error('no connection');
    const ask = () => client.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    ask();
    await client.answered(1);
    expect(client.text).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(client.text).toMatch(/\r\nKeep-Alive: timeout=65\r\n/i); // what the server tells clients
    await new Promise((r) => setTimeout(r, 5_500));
    ask();
    await client.answered(2);
    expect(client.text.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
    expect(client.reset).toBe(false);
    client.socket.destroy();
  });
});

describe('SIGTERM with idle keep-alive connections (a proxy holds them between requests)', () => {
  it('closes them once idle for a second, and exits well within the grace period, not after the keep-alive timeout', async () => {
    const server = await start({
      DATABASE_URL: tempDatabase(),
      NODE_ENV: 'production',
      KEEP_ALIVE_TIMEOUT_SECONDS: '60',
      SHUTDOWN_GRACE_SECONDS: '30',
    });
    const idle = await rawClients(server.url, 8);
    for (const c of idle) c.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await Promise.all(idle.map((c) => c.answered()));
    for (const c of idle) expect(c.text).toMatch(/^HTTP\/1\.1 200 OK/); // answered, kept alive, now idle
    const signalled = Date.now();
    const code = await server.stop();
    const took = Date.now() - signalled;
    await Promise.all(idle.map((c) => c.closed));
    expect(code).toBe(0);
    // The accept window (500 ms), a second idle, and the stop steps: 2 s here alone, more on a busy
    // machine; the keep-alive timeout (60 s) and the grace (30 s) far off.
    expect(took).toBeLessThan(6_000);
    expect(idle.filter((c) => c.reset)).toEqual([]);
  });
});

describe('SIGTERM with kept-alive connections in use (a client pool sending on each every 400 ms)', () => {
  it('never closes one under its client: each ends after an answer that says Connection: close, or idle for a second', async () => {
    const server = await start({ DATABASE_URL: tempDatabase(), NODE_ENV: 'production' });
    const clients = await rawClients(server.url, 8);
    const request = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    const answers = (text: string) => text.split('HTTP/1.1 ').slice(1);
    const lastSent = clients.map(() => 0);
    const closedAt = clients.map(() => 0);
    let sent = 0;
    const loops = clients.map(async (c, i) => {
      // Spread over the interval: some are idle when the accept window (500 ms) ends, their next request
      // coming; idle for less than a second (idleBeforeCloseMs), they carry it.
      await new Promise((r) => setTimeout(r, (i * 400) / clients.length));
      let open = true;
      void c.closed.then(() => {
        open = false;
        closedAt[i] = Date.now();
      });
      for (let mine = 0; open; ) {
        lastSent[i] = Date.now();
        c.socket.write(request);
        mine++;
        sent++;
        await vi.waitUntil(() => !open || answers(c.text).length >= mine, { timeout: 10_000, interval: 5 });
        await new Promise((r) => setTimeout(r, 400)); // idle between requests, as a pool's connection is
      }
    });
    await vi.waitUntil(() => sent >= 2 * clients.length, { timeout: 10_000 }); // a second's requests
    expect(await server.stop()).toBe(0);
    await Promise.all(loops);
    // Closing a connection between its requests races the client's next one (reset, its outcome unknown):
    // each is closed after telling its client, and the client sent nothing more; or, where this machine
    // held the client back past the second (a busy machine), after that second with nothing sent. The
    // bound is exact: the server's idle second starts after the last request was sent, and the close is
    // seen after it happened. (A server that closed busy connections would be seen here within ms.)
    const ended = clients.map((c, i) => ({
      toldClose: /\r\nConnection: close\r\n/i.test(answers(c.text).at(-1) ?? ''),
      idleMs: (closedAt[i] ?? 0) - (lastSent[i] ?? 0),
    }));
    expect(ended.filter((e) => !e.toldClose && e.idleMs < 1_000)).toEqual([]);
    expect(clients.reduce((n, c) => n + answers(c.text).length, 0)).toBe(sent);
    expect(clients.filter((c) => c.reset)).toEqual([]);
  });
});

describe.each(['1', '2'])('SIGTERM under a stream of new connections, WORKERS=%s', (workers) => {
  it('/readyz fails at once; every connection is answered or refused, and a reset never follows a read request', async () => {
    const server = await start({ DATABASE_URL: tempDatabase(), NODE_ENV: 'production', WORKERS: workers });
    const { hostname, port } = new URL(server.url);
    // busy: answered 503 on a connection past the address's share of the slots (server.ts), where a
    // loaded machine lets closed connections pile up in the server before it sees them close.
    type Outcome = 'answered' | 'busy' | 'refused' | 'reset' | 'readyz-503';
    const outcomes: Outcome[] = [];
    const resetsAfterAnswerStarted: string[] = [];
    /** Requests written before the signal was sent whose connection was reset: none may be. */
    let signalAt = Number.POSITIVE_INFINITY;
    let resetSentBeforeSignal = 0;
    let running = true;
    /** One client: a new connection per request, until the listener refuses it. */
    const client = async (path: string) => {
      while (running) {
        let sentAt = Number.POSITIVE_INFINITY;
        const outcome = await new Promise<Outcome>((resolve) => {
          const socket = connect(Number(port), hostname);
          let text = '';
          socket.on('data', (d) => {
            text += d;
          });
          socket.once('connect', () => {
            sentAt = performance.now();
            socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
          });
          socket.once('error', (error: NodeJS.ErrnoException) => {
            if (text) resetsAfterAnswerStarted.push(text.slice(0, 40));
            resolve(error.code === 'ECONNREFUSED' ? 'refused' : 'reset');
          });
          socket.once('close', () => {
            if (text.startsWith('HTTP/1.1 503') && path === '/readyz') resolve('readyz-503');
            else if (text.startsWith('HTTP/1.1 503')) resolve('busy');
            else resolve(text.startsWith('HTTP/1.1 200') ? 'answered' : 'reset');
          });
        });
        outcomes.push(outcome);
        if (outcome === 'reset' && sentAt < signalAt) resetSentBeforeSignal++;
        if (outcome === 'refused') return;
      }
    };
    // A flood: more clients than one process answers at once, so its listen backlog is seldom empty.
    const clients = Array.from({ length: 100 }, () => client('/healthz'));
    // The stream well under way (more than 50 answered) before the stop, however loaded the machine: a
    // fixed 300 ms saw 49 beside a second suite.
    const going = () => outcomes.filter((o) => o === 'answered').length > 50;
    if (!(await heldWithin(going, { timeout: 30_000, interval: 20 })))
      throw new Error(`the stream never got going: ${outcomes.join(' ')}`);
    // Readiness is asked on connections the process accepted before the signal, one per spelling the route
    // answers to (Express matches case and a trailing slash loosely): a new connection would queue behind
    // the flood in the listen backlog, and one still there when the listener closes is reset, as
    // docs/running.md says (a loaded machine saw it). Each asks until the signal has reached the process
    // that holds it, so the first 503 is "at once".
    const paths = ['/readyz', '/readyz/', '/READYZ?verbose=1'];
    const agent = new Agent({ keepAlive: true, maxSockets: paths.length });
    await Promise.all(paths.map(() => get(agent, server.url, '/healthz')));
    signalAt = performance.now();
    const exit = server.stop();
    // Each through the app like any answer: the Error shape, Retry-After and a request id; not logged as an
    // error.
    const readiness = await Promise.all(
      paths.map(async (path) => {
        // Asked again at once: each answer takes a round trip, and the signal lands within a few.
        for (const deadline = Date.now() + 5_000; ; ) {
          const answer = await get(agent, server.url, path);
          if (answer.status !== 200 || Date.now() > deadline) return { path, ...answer };
        }
      }),
    );
    agent.destroy();
    for (const { path, status, headers, body } of readiness) {
      expect(status, path).toBe(503);
      expect(headers['retry-after'], path).toBe('5');
      expect(headers['x-request-id'], path).toMatch(/^[0-9a-f-]{36}$/);
      expect(JSON.parse(body)).toEqual({
        code: 'service_unavailable',
        message: expect.stringContaining('shutting down'),
        status: 503,
      });
    }
    await Promise.race([Promise.all(clients), new Promise((r) => setTimeout(r, 5_000))]);
    running = false;
    expect(await exit).toBe(0);
    const count = (o: Outcome) => outcomes.filter((x) => x === o).length;
    // The counts go with every assertion, so that a failure on a loaded machine says what the run saw.
    const seen = `SIGTERM WORKERS=${workers}: ${count('answered')} answered, ${count('busy')} busy, ${count('refused')} refused, ${count('reset')} reset (${resetSentBeforeSignal} sent before the signal)`;
    process.stdout.write(`${seen}\n`);
    expect(count('answered'), seen).toBeGreaterThan(50);
    expect(count('refused'), seen).toBeGreaterThan(0); // the listener did close, and said so to new connections
    expect(resetsAfterAnswerStarted, seen).toEqual([]); // nothing half-answered
    // Every request sent on a connection the kernel had completed when the signal was sent is answered:
    // the accept window takes what the kernel held then (docs/running.md, Shutdown).
    expect(resetSentBeforeSignal, seen).toBe(0);
    // Every request the server read, it answered: none logged as left by its client unanswered.
    expect(server.output()).not.toContain('"aborted":true');
    expect(server.output()).not.toContain('request errored'); // readiness failing on purpose is no error
    // The kernel resets the connections it completed but the process had not accepted when the listener
    // closed (docs/running.md, Shutdown): counted, not bounded, as a loaded machine decides how many.
    expect(count('reset'), seen).toBeLessThan(count('answered'));
  });
});

describe.each(['1', '2'])('SIGTERM with WORKERS=%s', (workers) => {
  it('answers every request already sent, with Connection: close, and resets none', async () => {
    const server = await start({ DATABASE_URL: tempDatabase(), NODE_ENV: 'production', WORKERS: workers });
    const request = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
    // Keep-alive clients that were answered once and now sit idle, and fresh connections whose requests
    // are written just before the signal (in the server's socket buffers, maybe not yet read).
    const idle = await rawClients(server.url, 10);
    for (const c of idle) c.socket.write(request);
    await Promise.all(idle.map((c) => c.answered()));
    const fresh = await rawClients(server.url, 30);
    for (const c of fresh) c.socket.write(request);
    const exit = server.stop();
    // A connection made just after the signal, within the accept window: served and kept alive (a proxy
    // told to close during the window opens a new connection per request, and one completed as the
    // listener closes is reset with its request sent), then closed once idle after the window.
    await expect.poll(server.output, { timeout: 5_000, interval: 5 }).toContain('shutting down');
    const [late] = await rawClients(server.url, 1);
    late?.socket.write(request);
    await Promise.all([...idle, ...fresh, late].map((c) => c?.closed));
    expect(late?.text).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(late?.text).not.toMatch(/\r\nConnection: close\r\n/i);
    expect(late?.reset).toBe(false);
    expect({
      freshReset: fresh.filter((c) => c.reset).length,
      idleReset: idle.filter((c) => c.reset).length,
    }).toEqual({
      freshReset: 0,
      idleReset: 0,
    });
    for (const c of fresh) expect(c.text.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(1);
    for (const c of idle) {
      expect(c.reset).toBe(false);
      expect(c.text.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(1);
    }
    expect(await exit).toBe(0);
  });

  it('answers requests the kernel holds while the process is too busy to accept them (stopped), then exits 0', async () => {
    const server = await start({ DATABASE_URL: tempDatabase(), NODE_ENV: 'production', WORKERS: workers });
    const group = -(server.child.pid as number);
    // Every process of the server stopped: the kernel completes the connections and buffers their requests,
    // and nothing accepts them until the signal is handled. Closing the port at once reset 57 of 60.
    process.kill(group, 'SIGSTOP');
    const held = await rawClients(server.url, 60);
    for (const c of held) c.socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    await new Promise((r) => setTimeout(r, 200));
    const exit = server.stop();
    process.kill(group, 'SIGCONT');
    await Promise.all(held.map((c) => c.closed));
    expect(held.filter((c) => c.reset)).toHaveLength(0);
    // Answered once each, then closed (with Connection: close, or as idle keep-alive connections: with two
    // workers, one may answer before the primary's SIGTERM reaches it).
    for (const c of held) expect(c.text.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(1);
    expect(await exit).toBe(0);
  });
});

describe('output that nobody reads', () => {
  it('when stdout is closed by its reader (`| head`), logging fails quietly and SIGTERM still exits in time', async () => {
    const server = await start({
      DATABASE_URL: tempDatabase(),
      NODE_ENV: 'production',
      SHUTDOWN_GRACE_SECONDS: '2',
    });
    server.child.stdout?.destroy(); // the reader goes away: the server's next writes get EPIPE
    for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const started = Date.now();
    const exit = server.stop();
    await Promise.race([exit, new Promise((r) => setTimeout(r, 5_000))]);
    expect(server.child.exitCode ?? server.child.signalCode).not.toBeNull();
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('with nothing logged at the end of the stop (LOG_LEVEL=warn), an idle server exits 0 within its accept window and a moment, not its bound', async () => {
    const server = await start({ DATABASE_URL: tempDatabase(), NODE_ENV: 'production', LOG_LEVEL: 'warn' });
    const started = Date.now();
    expect(await server.stop()).toBe(0);
    // 500 ms of accept window, then at most a quarter second for the log's last lines: the bound is 11 s.
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it('when its reader goes away during the stop, the last lines are dropped and it still exits 0 in time', async () => {
    const server = await start({
      DATABASE_URL: tempDatabase(),
      NODE_ENV: 'production',
      SHUTDOWN_GRACE_SECONDS: '2',
      // Tracing to a collector that is not there: the stop ends with two lines back to back, the spans'
      // warning and "stopped", so that one is still unwritten at the exit.
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
    });
    const exited = once(server.child, 'exit').then(([code]) => code as number | null);
    server.child.kill('SIGTERM');
    await expect.poll(server.output, { timeout: 5_000, interval: 5 }).toContain('shutting down');
    // The last lines fail: the log's flush at exit met the broken pipe and retried it every 100 ms for good
    // (sonic-boom 4's flushSync retries every error, not only EAGAIN).
    server.child.stdout?.destroy();
    const code = await Promise.race([
      exited,
      new Promise((r) => setTimeout(() => r('still running'), 5_000)),
    ]);
    expect(code).toBe(0);
  });
});

// The release's version, or between releases `<release>+<commit>` (scripts/build-info.mjs).
