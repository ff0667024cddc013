// PostgreSQL's failures, turned into the store's errors here, next to the engine that raises them: which
// are "not now" (a 503, StoreUnavailableError) and which are bugs, and whether a lost connection may have
// carried a statement out (a write then answers write_unconfirmed); and how a connection given up on ends.
import { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type pg from 'pg';
import { StoreUnavailableError } from '../unavailable.js';

/**
 * SQLSTATE classes that mean "not now" rather than "never": connection, shutdown, statement, lock or
 * idle-transaction timeout, resources, serialization; and, for a service already running, a server that
 * refuses new connections for its credentials (class 28: a changed password, a dropped role) or its
 * database (3D000: dropped or renamed): an operator's to mend, and the service answers again once it is,
 * without a restart.
 */
const transient = /^(08|57P0|57014|55P03|25P03|53|40001|40P01|28|3D000)/;

/** What a refusal means, for the log line of a 503 (the SQLSTATE alone says little to an operator). */
const refusals: Record<string, string> = {
  '28P01': "the server refuses DATABASE_URL's password",
  '28000': "the server refuses DATABASE_URL's user",
  '3D000': "DATABASE_URL's database does not exist",
};

/**
 * Whether `error` left the connection out of step with the server: a network failure, or a deadline of
 * ours (the server never answered). Such a connection is destroyed, never asked again.
 */
export function connectionLost(error: unknown): boolean {
  const e = error as NodeJS.ErrnoException;
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH'].includes(
      e.code ?? '',
    ) ||
    /Connection terminated|timeout exceeded when trying to connect|timeout expired|Query read timeout|Client has encountered a connection error/i.test(
      e.message ?? '',
    )
  );
}

/**
 * Whether a lost connection may have carried the statement out: it was lost after the statement was sent
 * (reset, closed or silent mid-query), not while connecting. The server's own errors (an SQLSTATE) say
 * the statement failed.
 */
function lostAfterSending(error: unknown): boolean {
  const e = error as NodeJS.ErrnoException;
  if (/trying to connect|connection timeout/i.test(e.message ?? '')) return false;
  return (
    ['ECONNRESET', 'EPIPE'].includes(e.code ?? '') ||
    /Connection terminated unexpectedly|Query read timeout|Client has encountered a connection error/i.test(
      e.message ?? '',
    )
  );
}

/** The store's error for a PostgreSQL failure (503 for "not now"), or the error itself (a bug). */
export function translate(error: unknown): unknown {
  const e = error as NodeJS.ErrnoException & { code?: string };
  const notNow = (typeof e.code === 'string' && transient.test(e.code)) || connectionLost(error);
  if (!notNow) return error;
  const why = e.code ? `${e.code}${refusals[e.code] ? `: ${refusals[e.code]}` : ''}` : e.message;
  return new StoreUnavailableError(`PostgreSQL is unavailable: ${why}`, lostAfterSending(error));
}

/**
 * Ends a connection given up on (its answer missed the deadline, or it broke) with a TCP reset, so that a
 * statement cut off by a partition never arrives after it heals. Over TLS it is destroyed as pg would:
 * a TLS socket cannot reset (Node throws ERR_INVALID_HANDLE_TYPE), and resetting the TCP socket under a
 * live one crashes the process (measured on Node 24), so there the kernel may still deliver it. One
 * without a handle (already closed) is destroyed.
 * Written by hand: docs/decisions.md#pg-connection-reset
 */
export function resetConnection(client: pg.PoolClient): void {
  const socket = (Reflect.get(client, 'connection') as { stream?: unknown } | undefined)?.stream;
  if (!(socket instanceof Socket) || socket.destroyed) return;
  socket.on('error', () => {}); // what its end may still say: it is discarded
  if (socket instanceof TLSSocket || !Reflect.get(socket, '_handle')) socket.destroy();
  else socket.resetAndDestroy();
}
