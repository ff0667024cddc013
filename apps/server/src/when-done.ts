// One 'close' listener per response for everything that waits for its end (the in-flight count of its
// connection, the request log, the metrics, the store's health), instead of one listener each: the
// callbacks run in the order they were given, when the response is done or its connection is gone, and
// are told which, one judgement for all of them (`answered`). The one response listener outside it is the
// server span's (tracing/spans.ts), which must be named at 'finish', before the instrumentation ends it.
import type { ServerResponse } from 'node:http';

/**
 * Called at the end of a response. `answered`: the response was written out and the request it answers
 * was whole. False when the client left before the answer, or before the request it announced was
 * complete (the request errored): what the server wrote then, if its write raced the reset through (Node
 * 22 reports such a write finished), reached no one.
 */
export type DoneCallback = (answered: boolean) => void;

const waiting = Symbol('callbacks waiting for the end of the response');
type Waited = ServerResponse & { [waiting]?: DoneCallback[] };

export function whenDone(res: ServerResponse, callback: DoneCallback): void {
  const response = res as Waited;
  const callbacks = response[waiting];
  if (callbacks) {
    callbacks.push(callback);
    return;
  }
  const list = [callback];
  response[waiting] = list;
  res.once('close', () => {
    const answered = res.writableFinished && !res.req?.errored;
    for (const run of list) run(answered);
  });
}
