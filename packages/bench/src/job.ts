// The job every contestant does, written once: the same store queries on the same SQLite file (the
// server's own store modules), the same bearer check, the same JSON, and the same readiness line.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openSqliteStore } from '@animal-store/server';
import type { NewPet, PetStatus } from '@animal-store/spec';

const { pets, keys } = openSqliteStore(process.env.DATABASE_URL ?? ':memory:').store;

export const unauthorized = { code: 'unauthorized', message: 'no', status: 401 };
export const notFound = { code: 'not_found', message: 'no', status: 404 };

/** The key a bearer Authorization header names, read from the store (no cache), or undefined. */
export async function keyOf(header: string | undefined) {
  const token = /^Bearer (\S+)$/.exec(header ?? '')?.[1];
  return token === undefined ? undefined : keys.verify(token);
}

export const job = {
  list: async (query: { limit?: unknown; status?: unknown }) => {
    const status = query.status as PetStatus | undefined;
    const filter = status ? { status } : {};
    return (await pets.list({ limit: Number(query.limit ?? 20), afterId: 0, filter })).pets;
  },
  create: (body: NewPet) => pets.create({ ...body, status: body.status ?? 'available' }, () => {}),
  get: (id: string) => pets.get(BigInt(id)),
};

/** Prints the readiness line the bench waits for, and stops on SIGTERM. */
export function announce(server: Server): void {
  process.stdout.write(
    `${JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`,
  );
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}
