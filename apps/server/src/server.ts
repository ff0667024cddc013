// The HTTP server around the app: the bounds on what a client can hold (timeouts, connections, pipelined
// requests), and the Error shape for what Node's parser refuses before Express ever sees a request
// (http/parser-answers.ts).
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { type ConnectionLimits, loadConfig } from './config.js';
import { connectionSlots } from './connection-slots.js';
import { type ExpectingRequest, unmetExpectation } from './http/expectation.js';
import { maxHeaderLines, rawError, statusForParserError, toOriginForm } from './http/parser-answers.js';
import { markShuttingDown } from './http/shutting-down.js';
import { whenDone } from './when-done.js';

/** The connection limits of an empty environment: config.ts's defaults, stated there only. */
export const defaultConnectionLimits: ConnectionLimits = loadConfig({}).connections;

const inFlight = Symbol('requests in flight on this connection');
const served = Symbol('requests received on this connection');
const lastDone = Symbol('when the last answer on this connection was sent (ms)');
const silence = Symbol('closes the connection if no request head arrives');
const refused = Symbol("past its address's share of the slots: a request on it is answered 503");
type CountedSocket = Socket & {
  [refused]?: true;
  [inFlight]?: number;
  [served]?: number;
  [lastDone]?: number;
  [silence]?: NodeJS.Timeout;
};

/** What drain() needs of a server made by createServer. */
type DrainableServer = Server & {
  [draining]?: true;
  [closing]?: true;
  [connections]?: Set<CountedSocket>;
};
const draining = Symbol('the server is shutting down');
const closing = Symbol('the listener is closed: every answer closes its connection');
const connections = Symbol('open connections');

export function createServer(app: Express, limits: ConnectionLimits, logger: Logger): Server {
  function handle(req: IncomingMessage, res: ServerResponse) {
    // A client that pipelines requests without reading the answers makes Node queue them all: past the
    // cap, the connection is dropped instead of holding more memory.
    const socket = req.socket as CountedSocket;
    if (socket[refused]) {
      res.shouldKeepAlive = false;
      socket.end(rawError(503));
      return;
    }
    clearTimeout(socket[silence]);
    socket[served] = (socket[served] ?? 0) + 1;
    socket[inFlight] = (socket[inFlight] ?? 0) + 1;
    // While draining, the request is marked for readiness to fail (http/shutting-down.ts); once the
    // listener is closed, every answer closes its connection after it (see drain).
    if (server[draining]) markShuttingDown(req);
    if (server[closing]) res.setHeader('Connection', 'close');
    whenDone(res, () => {
      socket[inFlight] = (socket[inFlight] ?? 1) - 1;
      socket[lastDone] = performance.now();
    });
    if ((socket[inFlight] ?? 0) > limits.maxPipelinedRequests) {
      logger.warn({ remoteAddress: socket.remoteAddress }, 'too many pipelined requests: connection dropped');
      socket.destroy();
      return;
    }
    if (req.rawHeaders.length / 2 > maxHeaderLines) {
      res.shouldKeepAlive = false;
      socket.end(rawError(431));
      return;
    }
    toOriginForm(req);
    app(req, res);
  }
  const server: DrainableServer = createHttpServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // How often Node checks the two timeouts above (default 30 s, far coarser than they are).
      connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs / 2),
    },
    handle,
  );
  const open = new Set<CountedSocket>();
  server[connections] = open;
  /**
   * A new connection past its address's share of the slots (connection-slots.ts): it holds no slot, and is
   * not reset at once, as its client may have written its request already and could not tell whether it
   * was read (seen: a flood of 600 clients from one address, a third of the resets on requests sent long
   * before a SIGTERM). A request on it is answered 503 with Retry-After and Connection: close; whatever
   * happens, it is closed within refusedForMs of its accept, or the headers timeout if shorter (as a silent
   * connection is closed below: before Node's own check of that timeout would answer it 408). At most
   * MAX_CONNECTIONS of them at once: past that, one is closed at once, so that a client opening connections
   * by the thousand holds no more than that many (Node's own cap counts both, and drops what is past it).
   */
  const refusedFor = Math.min(refusedForMs, limits.headersTimeoutMs);
  let refusing = 0;
  const refuse = (socket: CountedSocket) => {
    if (refusing >= limits.maxConnections) return void socket.destroy();
    refusing++;
    socket[refused] = true;
    const close = setTimeout(() => socket.destroy(), refusedFor).unref();
    socket.once('close', () => {
      refusing--;
      clearTimeout(close);
    });
  };
  const slots = connectionSlots(limits);
  server.on('connection', (socket: CountedSocket) => {
    const address = socket.remoteAddress ?? '';
    if (!slots.take(address, open.size)) return void refuse(socket);
    open.add(socket);
    // Node's headers timeout runs only once bytes arrive: a connection that sends nothing would hold one of
    // the MAX_CONNECTIONS slots for ever. It gets the same time to send a complete request head.
    // A partial head gets the 408 Node would send; silence, just the close.
    const expire = () =>
      socket.bytesRead > 0 && socket.writable ? socket.end(rawError(408)) : socket.destroy();
    socket[silence] = setTimeout(expire, limits.headersTimeoutMs).unref();
    socket.once('close', () => {
      slots.give(address);
      open.delete(socket);
      clearTimeout(socket[silence]);
    });
  });
  server.maxConnections = 2 * limits.maxConnections; // the slots, and as many refusals being answered
  server.maxHeadersCount = maxHeaderLines + 1; // one more than allowed: enough to tell that it was exceeded
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // Never throws: a socket that cannot take an answer any more is just closed.
    try {
      if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
      socket.end(rawError(statusForParserError[error.code ?? ''] ?? 400));
    } catch {
      socket.destroy();
    }
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    // An Expect other than 100-continue: answered 417 by the app (see unsupportedExpectation), so that under
    // /v1 it is identified, counted and carries the rate-limit headers like every other answer.
    (req as ExpectingRequest)[unmetExpectation] = true;
    res.setHeader('Connection', 'close');
    handle(req, res);
  });
  return server;
}

/** How many client connections `server` (made by createServer) holds open now. */
export const openConnections = (server: Server): number =>
  (server as DrainableServer)[connections]?.size ?? 0;

/** How long a connection past its address's share of the slots is kept to answer its request (503). */
const refusedForMs = 1_000;

/** After a shutdown signal, how long connections are still accepted (then answered and closed). */
export const acceptWindowMs = 500;

/**
 * While draining, how long a kept-alive connection must have sat idle before it is closed. A client
 * that reuses a connection the moment the server closes it meets a reset, and cannot know whether its
 * request was read (a POST's outcome unknown): so a connection in use is left to carry its next request,
 * answered with `Connection: close`, and only one its client has left alone this long is closed.
 */
export const idleBeforeCloseMs = 1_000;

/**
 * Graceful shutdown, written once for every process that serves: after the accept window (connections
 * kept alive through it), stop accepting; answer every request already received or still arriving on an
 * open connection, each with `Connection: close`; close each kept-alive connection once it has sat idle between requests for
 * idleBeforeCloseMs; after `graceMs`, cut what is left. Resolves when every connection is closed.
 *
 * Not `server.close()`: since Node 19 it also closes every connection without a request in progress at
 * once, including fresh ones whose request is already in the socket's buffer, unread (the kernel answers
 * those clients with a reset), and kept-alive ones a client is reusing that very moment (a reset too).
 * Here a fresh connection keeps its chance to send its request (bounded by the headers timeout, see
 * createServer), and a busy one its next request.
 */
export async function drain(server: Server, graceMs: number): Promise<void> {
  const drainable = server as DrainableServer;
  drainable[draining] = true;
  // Connections the kernel completed but Node has not accepted yet (its listen backlog) would be reset
  // by closing the port at once: accept for a moment more, answering them with Connection: close.
  await new Promise((r) => setTimeout(r, Math.min(acceptWindowMs, graceMs)));
  // Closed from the check phase, right after a poll phase has accepted what the kernel held. Connections
  // the kernel completes after that poll and before the close are reset by it, unread (how many depends on
  // the load: docs/running.md, Shutdown).
  await new Promise((r) => setImmediate(r));
  // Told to close from here on, not during the window: a proxy told so during it opens a new connection
  // for each next request, and one of them completed by the kernel as the listener closes is reset
  // with its request sent (a POST through nginx: a 502, two in a Compose run). Kept alive through the
  // window, a proxy's pool opens next to none then.
  drainable[closing] = true;
  const closed = new Promise<void>((resolve) => {
    NetServer.prototype.close.call(server, () => resolve());
  });
  const closeIdle = () => {
    const now = performance.now();
    for (const socket of drainable[connections] ?? []) {
      const idle = (socket[served] ?? 0) > 0 && !socket[inFlight];
      if (idle && !socket.writableEnded && now - (socket[lastDone] ?? 0) >= idleBeforeCloseMs) socket.end();
    }
  };
  closeIdle();
  const sweep = setInterval(closeIdle, 100);
  const cut = setTimeout(() => server.closeAllConnections(), graceMs);
  await closed;
  clearInterval(sweep);
  clearTimeout(cut);
}
