// The floor: what Node and SQLite do on this machine with no framework, no validation, no rate limiting
// and no logging, answering the same routes with the same store queries, the same bearer hash check and
// the same JSON as the real server (it reuses the server's store modules).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openSqliteStore } from '@animal-store/server';
import type { PetStatus } from '@animal-store/spec';

const { pets, keys } = openSqliteStore(process.env.DATABASE_URL ?? ':memory:').store;

const send = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
};
const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
};

const server = createServer(async (req, res) => {
  const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  if (!token || !(await keys.verify(token)))
    return send(res, 401, { code: 'unauthorized', message: 'no', status: 401 });
  const url = new URL(req.url ?? '/', 'http://floor');
  if (url.pathname === '/v1/pets' && req.method === 'GET') {
    const status = (url.searchParams.get('status') ?? undefined) as PetStatus | undefined;
    const limit = Number(url.searchParams.get('limit') ?? 20);
    return send(res, 200, (await pets.list({ limit, afterId: 0, ...(status && { status }) })).pets);
  }
  if (url.pathname === '/v1/pets' && req.method === 'POST') {
    const body = await readBody(req);
    return send(res, 201, await pets.create({ ...body, status: body.status ?? 'available' }, () => {}));
  }
  const id = /^\/v1\/pets\/(\d+)$/.exec(url.pathname)?.[1];
  if (id && req.method === 'GET') {
    const pet = await pets.get(BigInt(id));
    return pet ? send(res, 200, pet) : send(res, 404, { code: 'not_found', message: 'no', status: 404 });
  }
  send(res, 404, { code: 'not_found', message: 'no', status: 404 });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`,
  );
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
