// One 'close' listener per response for everything that waits for its end (the in-flight count of its
// connection, the request log, the metrics, the store's health), instead of one listener each: the
// callbacks run in the order they were given, when the response is done or its connection is gone
// (`res.writableFinished` tells which).
import type { ServerResponse } from 'node:http';

const waiting = Symbol('callbacks waiting for the end of the response');
type Waited = ServerResponse & { [waiting]?: (() => void)[] };

export function whenDone(res: ServerResponse, callback: () => void): void {
  const response = res as Waited;
  const callbacks = response[waiting];
  if (callbacks) {
    callbacks.push(callback);
    return;
  }
  const list = [callback];
  response[waiting] = list;
  res.once('close', () => {
    for (const run of list) run();
  });
}
