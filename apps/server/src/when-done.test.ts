// whenDone: one 'close' listener per response however many wait for its end, each callback run once, in
// order, told whether the response was answered or the client left before it.
import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { whenDone } from './when-done.js';

const ran: { name: string; answered: boolean }[] = [];
let listeners: number[] = []; // close listeners before any callback, after the first, after all three
const server = createServer((req, res) => {
  listeners = [res.listenerCount('close')];
  for (const name of ['connection', 'log', 'metrics']) {
    whenDone(res, (answered) => ran.push({ name, answered }));
    if (name === 'connection') listeners.push(res.listenerCount('close'));
  }
  listeners.push(res.listenerCount('close'));
  if (req.url === '/slow') return; // never answered: the client gives up
  res.end('done');
});
let port = 0;
beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});
afterAll(() => {
  server.close();
});

describe('whenDone', () => {
  it('adds one close listener for every callback, and runs them in order once the response is done', async () => {
    ran.length = 0;
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('done');
    await expect.poll(() => ran.length).toBe(3);
    expect(ran).toEqual([
      { name: 'connection', answered: true },
      { name: 'log', answered: true },
      { name: 'metrics', answered: true },
    ]);
    const [before = 0, first, all] = listeners;
    expect([first, all]).toEqual([before + 1, before + 1]);
  });

  it('runs them when the client leaves before the answer, saying the response did not finish', async () => {
    ran.length = 0;
    listeners = [];
    const req = request({ port, host: '127.0.0.1', path: '/slow' });
    req.on('error', () => {});
    req.end();
    await expect.poll(() => listeners.length).toBeGreaterThan(0);
    req.destroy();
    await expect.poll(() => ran.length).toBe(3);
    expect(ran.map((r) => r.answered)).toEqual([false, false, false]);
  });
});
