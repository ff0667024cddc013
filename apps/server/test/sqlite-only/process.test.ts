// The built server and key command as processes: configuration, first start, restarts, signals, the clock.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { Agent, type IncomingHttpHeaders, request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  createKey,
  enterprise,
  freePort,
  listeningUrl,
  spawnUntilReady,
  toolFor,
} from '@animal-store/test-support';
import { describe, expect, it } from 'vitest';
import { call, processesStoppedAfterEach, serverDist, tempDatabase } from '../support/harness.js';

/** A fresh database holding one key made by the key command. */
async function databaseWithKey(plan = 'free') {
  const databasePath = tempDatabase();
  const { key } = await createKey(serverDist, { DATABASE_URL: databasePath }, '--plan', plan);
  return { databasePath, key };
}
const faketime = toolFor('the sunset under a moved clock', 'faketime');
/** The built server in production mode under libfaketime, its clock starting at `instant`. */
const startAt = (instant: string, databasePath: string) =>
  start({ DATABASE_URL: databasePath, NODE_ENV: 'production' }, [faketime as string, '-f', `@${instant}`]);

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

describe('configuration', () => {
  it.each([
    ['PORT', 'eighty', /PORT/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL/],
    ['RATE_LIMIT_BAN_SECONDS', '0', /RATE_LIMIT_BAN_SECONDS/],
  ])('when %s=%s, then the server refuses to start with a clear message', async (name, value, message) => {
    await expect(start({ DATABASE_URL: tempDatabase(), [name]: value })).rejects.toThrow(message);
  });
});

describe('first start', () => {
  it('outside production, creates one development key, prints it once, and it works', async () => {
    const databasePath = tempDatabase();
    const first = await start({ DATABASE_URL: databasePath });
    const key = /\n {2}(as_[0-9a-f]{12}_[A-Za-z0-9_-]{43})\n/.exec(first.output())?.[1] as string;
    const res = await call(`${first.url}/v1/pets`, key);
    expect(res.status).toBe(200);
    // Limits a first client loop will not hit by accident (a free key would be banned within a minute).
    expect(res.headers.get('ratelimit-policy')).toBe('"minute";q=6000;w=60, "day";q=1000000;w=86400');
    expect(first.output().split(key)).toHaveLength(2); // printed once, never logged
    await first.stop();
    const second = await start({ DATABASE_URL: databasePath });
    expect(second.output()).not.toContain('Development API key');
    expect(second.output()).toContain(
      "Need an API key? npx -y -p node@24 -p pnpm@10 -c 'pnpm keys create --plan free'",
    );
  });

  it('in production, creates no key', async () => {
    const server = await start({ DATABASE_URL: tempDatabase(), NODE_ENV: 'production' });
    expect(server.output()).not.toContain('as_');
    expect(server.output()).not.toContain('Need an API key');
  });
});

describe('persistence', () => {
  it('keeps pets and keys across a restart, and never reuses an id', async () => {
    const { databasePath, key } = await databaseWithKey('pro');
    const first = await start({ DATABASE_URL: databasePath, NODE_ENV: 'production' });
    const created = await (
      await call(`${first.url}/v1/pets`, key, {
        method: 'POST',
        body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
      })
    ).json();
    expect(await first.stop()).toBe(0);

    const second = await start({ DATABASE_URL: databasePath, NODE_ENV: 'production' });
    expect(await (await call(`${second.url}/v1/pets`, key)).json()).toEqual([created]);
    const next = await (
      await call(`${second.url}/v1/pets`, key, {
        method: 'POST',
        body: JSON.stringify({ name: 'Tom', categoryId: 1 }),
      })
    ).json();
    expect(next.id).toBeGreaterThan(created.id);
  });
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
          const deadline = Date.now() + 10_000;
          while ((client.text.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0) < count && Date.now() < deadline)
            await new Promise((r) => setTimeout(r, 10));
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
        while (open && answers(c.text).length < mine) await new Promise((r) => setTimeout(r, 5));
        await new Promise((r) => setTimeout(r, 400)); // idle between requests, as a pool's connection is
      }
    });
    await new Promise((r) => setTimeout(r, 1_000));
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
    for (const deadline = Date.now() + 30_000; outcomes.filter((o) => o === 'answered').length <= 50; ) {
      if (Date.now() > deadline) throw new Error(`the stream never got going: ${outcomes.join(' ')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
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
    await new Promise((r) => setTimeout(r, 100));
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
    while (!server.output().includes('shutting down')) await new Promise((r) => setTimeout(r, 5));
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
const { buildVersion } = (await import(new URL('../../scripts/build-info.mjs', import.meta.url).href)) as {
  buildVersion: (dir?: string, given?: string) => string;
};

describe('the version a build reports', () => {
  it("is the release's in the commit that versioned it, `<release>+<commit>` after it, the release's outside git", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-build-'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ version: '9.9.9' }));
    expect(buildVersion(dir)).toBe('9.9.9'); // not a checkout: an installed package
    const git = (...args: string[]) =>
      promisify(execFile)('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir });
    await git('init', '-q');
    writeFileSync(join(dir, 'CHANGELOG.md'), '## 9.9.9\n');
    await git('add', '.');
    await git('commit', '-qm', 'Version packages');
    expect(buildVersion(dir)).toBe('9.9.9');
    writeFileSync(join(dir, 'later.txt'), 'a change after the release\n');
    await git('add', '.');
    await git('commit', '-qm', 'A change on main');
    const head = (await git('rev-parse', '--short=7', 'HEAD')).stdout.trim();
    expect(buildVersion(dir)).toBe(`9.9.9+${head}`);
  });

  it('is BUILD_VERSION where the host says it (the image build, without .git), and refuses what is not a version', () => {
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-build-'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ version: '9.9.9' }));
    expect(buildVersion(dir, '9.9.9+1a2b3c4')).toBe('9.9.9+1a2b3c4');
    expect(buildVersion(dir, '9.9.9+unknown')).toBe('9.9.9+unknown');
    expect(() => buildVersion(dir, '$(rm -rf /)')).toThrow(/BUILD_VERSION: .* is not a version/);
  });
});

describe('the command line', () => {
  const node = (script: string, args: string[], cwd: string, env: Record<string, string> = {}) =>
    promisify(execFile)(process.execPath, [join(serverDist, script), ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...env },
    });
  const version = buildVersion().replace('+', '\\+');

  it.each([
    ['main.js', '--help', /Usage: animal-store-server[\s\S]*environment/],
    ['main.js', '--version', new RegExp(`^${version}\n$`)],
    ['cli/keys.js', '--version', new RegExp(`^${version}\n$`)],
    ['cli/keys.js', '--help', /Usage: keys/],
  ])('%s %s answers and exits 0, creating nothing', async (script, flag, output) => {
    const cwd = mkdtempSync(join(tmpdir(), 'animal-store-cli-'));
    const { stdout } = await node(script, [flag], cwd);
    expect(stdout).toMatch(output);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('--healthcheck asks the configured listener, IPv6 loopback included: 0 while it answers, 1 once it is gone', async () => {
    const port = String(await freePort());
    const env = { HOST: '::1', PORT: port, DATABASE_URL: tempDatabase(), NODE_ENV: 'production' };
    const server = await start(env);
    const cwd = mkdtempSync(join(tmpdir(), 'animal-store-cli-'));
    await expect(node('main.js', ['--healthcheck'], cwd, env)).resolves.toMatchObject({ stdout: '' });
    await server.stop();
    await expect(node('main.js', ['--healthcheck'], cwd, env)).rejects.toMatchObject({ code: 1 });
    expect(readdirSync(cwd)).toEqual([]); // nothing made: no store, no key
  });

  // `script` (util-linux) gives the server a terminal as its stdout, as a developer's shell does.
  const terminal = toolFor('logs on a terminal', 'script', 'bsdutils');
  it.runIf(terminal)(
    'on a terminal, logs are pretty-printed outside production and JSON in production; piped, always JSON',
    async () => {
      const onTerminal = async (nodeEnv: string) => {
        const command = `exec "${process.execPath}" "${join(serverDist, 'main.js')}"`;
        const server = await spawnUntilReady(terminal as string, ['-qfec', command, '/dev/null'], {
          env: { PATH: process.env.PATH ?? '', PORT: '0', NODE_ENV: nodeEnv, DATABASE_URL: tempDatabase() },
          ready: /listening/,
        });
        await server.stop();
        return server.output();
      };
      const pretty = await onTerminal('development');
      expect(pretty).toMatch(/INFO.*listening/);
      expect(pretty).not.toContain('{"level"');
      const json = await onTerminal('production');
      expect(json).toMatch(/^\{"level":30,.*"msg":"listening"/m);
      const piped = await start({ DATABASE_URL: tempDatabase(), NODE_ENV: 'development' });
      expect(piped.output()).toMatch(/^\{"level":30,.*"msg":"listening"/m);
    },
  );

  it('pnpm start: Ctrl-C (SIGINT to the whole process group, as a terminal sends it) ends with exit 0 and no pnpm error', async () => {
    const root = fileURLToPath(new URL('../../../..', import.meta.url));
    // Under TURBO_FORCE (turbo's switch to skip its cache), a start on a fresh build builds nothing: the
    // suite's other processes read that dist meanwhile (scripts/fresh-build.mjs).
    const builtAt = () => statSync(join(root, 'apps/server/dist/cli/keys.js')).mtimeMs;
    const before = builtAt();
    const started = await spawnUntilReady('pnpm', ['start'], {
      env: {
        ...process.env,
        PORT: '0',
        NODE_ENV: 'production',
        DATABASE_URL: tempDatabase(),
        TURBO_FORCE: 'true',
      },
      cwd: root,
      ready: (output) => listeningUrl(output) !== undefined,
      timeoutMs: 120_000,
    });
    const exited = once(started.child, 'exit');
    process.kill(-(started.child.pid as number), 'SIGINT');
    const [code] = await exited;
    expect(code).toBe(0);
    expect(started.output()).toMatch(/"msg":"stopped"/);
    expect(started.output()).not.toMatch(/ELIFECYCLE|Command failed/);
    expect(builtAt()).toBe(before);
  }, 180_000);

  it('reads .env in the working directory for what the environment leaves unset; the environment wins', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'animal-store-env-'));
    writeFileSync(
      join(cwd, '.env'),
      'DATABASE_URL=from-env-file.db\nNODE_ENV=production\nRATE_LIMIT_ANONYMOUS_PER_MINUTE=2\nLOG_LEVEL=warn\n',
    );
    const policy = async (env: Record<string, string>) => {
      const server = await spawnUntilReady(process.execPath, [join(serverDist, 'main.js')], {
        env: { PATH: process.env.PATH ?? '', PORT: '0', ...env },
        cwd,
        ready: (output) => listeningUrl(output) !== undefined,
      });
      try {
        const res = await fetch(`${listeningUrl(server.output())}/v1/pets`);
        return res.headers.get('ratelimit-policy');
      } finally {
        await server.stop();
      }
    };
    expect(await policy({})).toBe('"minute";q=2;w=60');
    expect(existsSync(join(cwd, 'from-env-file.db'))).toBe(true);
    expect(await policy({ RATE_LIMIT_ANONYMOUS_PER_MINUTE: '5' })).toBe('"minute";q=5;w=60');
  });
});

describe.runIf(faketime)('GET /pets/{petId} after its sunset', () => {
  it('when the clock is past 2030-12-05, then 410 names the replacement; GET /pets still works', async () => {
    const { databasePath, key } = await databaseWithKey();
    const server = await startAt('2030-12-05 00:00:01', databasePath);
    const res = await call(`${server.url}/v1/pets/1`, key);
    expect(res.status).toBe(410);
    expect(res.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
    expect(await res.json()).toEqual({
      code: 'gone',
      message: expect.stringMatching(/use GET \/pets\?id=1 instead/),
      status: 410,
    });
    expect((await call(`${server.url}/v1/pets`, key)).status).toBe(200);
  });

  it('when the clock is just before the sunset, then getPet still answers', async () => {
    const { databasePath, key } = await databaseWithKey();
    const server = await startAt('2030-12-04 23:59:00', databasePath);
    expect((await call(`${server.url}/v1/pets/1`, key)).status).toBe(404);
  });
});

describe('configuration reaches the running server', () => {
  it('TRUST_PROXY: behind a trusted proxy, the per-address limit counts each forwarded client', async () => {
    const env = {
      DATABASE_URL: tempDatabase(),
      NODE_ENV: 'production',
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: '2',
    };
    const asClient = (url: string, address: string) =>
      fetch(`${url}/v1/pets`, { headers: { 'x-forwarded-for': address } });
    const trusting = await start({ ...env, TRUST_PROXY: 'loopback' });
    const statuses = [];
    for (const address of ['203.0.113.1', '203.0.113.1', '203.0.113.1', '203.0.113.2']) {
      statuses.push((await asClient(trusting.url, address)).status);
    }
    expect(statuses).toEqual([401, 401, 429, 401]);

    const untrusting = await start({ ...env, DATABASE_URL: tempDatabase() });
    const shared = [];
    for (const address of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) {
      shared.push((await asClient(untrusting.url, address)).status);
    }
    expect(shared).toEqual([401, 401, 429]); // all one address: the proxy's
  });

  it('logs every request with its request id', async () => {
    const { databasePath, key } = await databaseWithKey('free');
    const server = await start({ DATABASE_URL: databasePath, NODE_ENV: 'production' });
    await call(`${server.url}/v1/pets`, key, { headers: { 'x-request-id': 'trace-4711' } });
    // The line is written after the answer: at once when idle, later under load.
    const logged = () =>
      server
        .output()
        .split('\n')
        .find((l) => l.includes('request completed'));
    await expect.poll(logged, { timeout: 10_000 }).toBeDefined();
    expect(JSON.parse(logged() as string)).toMatchObject({
      req: { id: 'trace-4711', method: 'GET', url: '/v1/pets' },
    });
  });
});

/** The cluster's count of listPets answers by status, and its build_info samples, from one scrape of /metrics. */
async function listCounts(url: string, init: RequestInit = {}) {
  const response = await fetch(`${url}/metrics`, init);
  const text = await response.text();
  const count = (status: string) =>
    Number(
      text
        .split('\n')
        .find((l) =>
          l.startsWith(`animal_store_http_requests_total{operation="listPets",status="${status}"}`),
        )
        ?.split(' ')
        .at(-1) ?? 0,
    );
  return {
    ok: count('200'),
    limited: count('429'),
    builds: text.match(/^animal_store_build_info\{/gm)?.length,
  };
}

describe('WORKERS', () => {
  it('shares the port over two workers, limits stay exact, a dead worker is replaced, SIGTERM drains all', async () => {
    const databasePath = tempDatabase();
    const { key } = await createKey(serverDist, { DATABASE_URL: databasePath }, ...enterprise(20, 1000));
    const server = await start({ DATABASE_URL: databasePath, NODE_ENV: 'production', WORKERS: '2' });
    const statuses = await Promise.all(
      Array.from({ length: 200 }, () => call(`${server.url}/v1/pets`, key).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(180);
    // /metrics answers for both workers, whichever takes the scrape: the counts add up to what was sent,
    // the same at every scrape (one worker's alone went 459, 541, 459, ... and broke rate()), and grow.
    const sampled = () => listCounts(server.url);
    const scrapes = [];
    for (let i = 0; i < 10; i++) scrapes.push(await sampled());
    expect(scrapes).toEqual(Array(10).fill({ ok: 20, limited: 180, builds: 1 }));
    await call(`${server.url}/v1/pets`, key);
    expect((await sampled()).limited).toBe(181);

    const pids = [...server.output().matchAll(/"workerPid":(\d+),"msg":"worker started"/g)].map((m) =>
      Number(m[1]),
    );
    expect(pids).toHaveLength(2);
    // A worker stopped (SIGSTOP: it takes nothing more) while new connections arrive, then killed: every
    // one of them is answered by the other worker or reset at once, none waits. (Handed to the worker by
    // the primary, a connection once stayed open with nobody to answer it, until the client gave up.)
    process.kill(pids[0] as number, 'SIGSTOP');
    const sent = Array.from({ length: 12 }, async () => {
      const started = Date.now();
      await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(15_000) })
        .then((r) => r.arrayBuffer())
        .catch(() => {});
      return Date.now() - started;
    });
    await new Promise((r) => setTimeout(r, 500));
    process.kill(pids[0] as number, 'SIGKILL');
    const waits = await Promise.all(sent);
    for (let i = 0; i < 50 && !server.output().includes('worker died; starting another'); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(Math.max(...waits)).toBeLessThan(5_000);
    expect(server.output()).toContain('worker died; starting another');
    const answered = await Promise.all(
      Array.from({ length: 10 }, () => fetch(`${server.url}/healthz`).then((r) => r.status)),
    );
    expect(answered.every((s) => s === 200)).toBe(true);
    // The dead worker's counts stay in the cluster's: the totals never fall (Prometheus would read a reset).
    const after = await sampled();
    expect(after.ok).toBeGreaterThanOrEqual(20);
    expect(after.limited).toBeGreaterThanOrEqual(181);

    expect(await server.stop()).toBe(0);
    expect(server.output()).toMatch(/"msg":"stopped"/);
  }, 60_000);

  it('answers /metrics for the cluster while a worker is stopped or still starting, and no total falls', async () => {
    // A worker that starts slowly, as on a busy machine: once `slow` exists, a worker sleeps 7 s before
    // it loads the service (a preload of the test's own, through NODE_OPTIONS; the service is unchanged).
    const dir = mkdtempSync(join(tmpdir(), 'slow-worker-'));
    const slow = join(dir, 'slow');
    const preload = join(dir, 'preload.mjs');
    writeFileSync(
      preload,
      `import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
if (cluster.isWorker && existsSync(${JSON.stringify(slow)}))
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 7_000);
`,
    );
    const databasePath = tempDatabase();
    const { key } = await createKey(serverDist, { DATABASE_URL: databasePath }, ...enterprise(20, 1000));
    const server = await start({
      DATABASE_URL: databasePath,
      NODE_ENV: 'production',
      WORKERS: '2',
      NODE_OPTIONS: `--import=${preload}`,
    });
    const sent = await Promise.all(
      Array.from({ length: 30 }, () => call(`${server.url}/v1/pets`, key).then((r) => r.status)),
    );
    expect(sent.filter((s) => s === 200)).toHaveLength(20);
    const all = { ok: 20, limited: 10, builds: 1 };
    expect(await listCounts(server.url)).toEqual(all); // every worker has answered the primary once
    const [first, second] = [...server.output().matchAll(/"workerPid":(\d+),"msg":"worker started"/g)].map(
      (m) => Number(m[1]),
    );

    // One worker stopped: the scrape is answered, the stopped one summed as it last answered (prom-client's
    // own gathering failed the whole scrape after 5 s). A scrape the stopped worker took is not answered.
    process.kill(second as number, 'SIGSTOP');
    const whileStopped = [];
    // Each scrape the running worker takes waits 2 s for the stopped one; on a busy machine (a second suite
    // beside this one) 4 tries of 4.5 s each found none answered in time: 6 tries of 8 s.
    for (let i = 0; i < 6 && whileStopped.length < 2; i++) {
      const scrape = await listCounts(server.url, {
        headers: { connection: 'close' },
        signal: AbortSignal.timeout(8_000),
      }).catch(() => undefined);
      if (scrape) whileStopped.push(scrape);
    }
    process.kill(second as number, 'SIGCONT');
    expect(whileStopped.length).toBeGreaterThan(0);
    expect(whileStopped).toEqual(Array(whileStopped.length).fill(all));

    // One worker dead, its replacement still starting: the survivor answers at once, with the dead one's counts.
    writeFileSync(slow, '');
    process.kill(first as number, 'SIGKILL');
    for (let i = 0; i < 50 && !server.output().includes('worker died; starting another'); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(server.output()).toContain('worker died; starting another');
    await new Promise((r) => setTimeout(r, 300)); // the replacement is forked and sleeping
    expect(await listCounts(server.url, { headers: { connection: 'close' } })).toEqual(all);
  }, 120_000);
});
