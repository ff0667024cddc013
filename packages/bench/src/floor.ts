// The floor: what Node and SQLite do on this machine with no framework, no validation, no rate limiting
// and no logging, answering the same routes with the same store queries, the same bearer hash check and
// the same JSON as the real server (it reuses the server's store modules).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { announce, job, keyOf, notFound, unauthorized } from './job.js';

const send = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
};
const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
};

const server = createServer(async (req, res) => {
  if (!(await keyOf(req.headers.authorization))) return send(res, 401, unauthorized);
  const url = new URL(req.url ?? '/', 'http://floor');
  if (url.pathname === '/v1/pets' && req.method === 'GET') {
    return send(res, 200, await job.list(Object.fromEntries(url.searchParams)));
  }
  if (url.pathname === '/v1/pets' && req.method === 'POST') {
    return send(res, 201, await job.create(await readBody(req)));
  }
  const id = /^\/v1\/pets\/(\d+)$/.exec(url.pathname)?.[1];
  if (id && req.method === 'GET') {
    const pet = await job.get(id);
    return pet ? send(res, 200, pet) : send(res, 404, notFound);
  }
  send(res, 404, notFound);
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => announce(server));
