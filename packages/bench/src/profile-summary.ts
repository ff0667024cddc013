// A text summary of a V8 CPU profile (`--cpu-prof`), written beside it: where the busy time went, by
// package (or our own file), by function, and by layer of the server. Idle time is left out, so the shares
// are of the time the server was working. Written by hand: docs/decisions.md#profile-summary.
import { readFileSync, writeFileSync } from 'node:fs';

type CallFrame = { functionName: string; url: string; lineNumber: number };
type Profile = {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
};

/** Who a frame belongs to: a package of node_modules, a file of this repository, or Node itself. */
function owner({ url, functionName }: CallFrame, root: string): string {
  const pkg = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  if (url.startsWith('file://')) return url.replace(`file://${root}`, '');
  return url || functionName;
}

const startUp = 'start-up (loading modules, compiling schemas)';
/**
 * The server's layers, each known by where its code lives (a file of apps/server's dist, a package, a part
 * of Node), tried in this order on every frame. The first rules are the most specific: the limiter's
 * headers are its own, the SQLite addon is the query's whoever calls it. `ours`: a layer of our own, held to
 * `layerBudgetUs` of CPU a request (issue #73): what a lookup in a cache, a log line, a decision in memory or
 * a header costs in the best Node servers. The others (the contract's validation, the store, writing the
 * answer, Express, Node's parse, the collector) are work a validated Express does too.
 */
const ours = true;
export const serverLayers: [RegExp, string, ours?: boolean][] = [
  [/node:internal\/modules\/|\/dist\/main\.js |\/dist\/run\.js |ajv\/dist\/compile| evaluate$/, startUp],
  [
    /\/dist\/http\/request-log\.js|\/dist\/when-done\.js|\/dist\/log-output\.js|\/pino\/|\/sonic-boom\//,
    'the request log (ours, pino)',
    ours,
  ],
  [/\/dist\/ops\/(metrics|request-metrics)\.js|\/prom-client\//, 'metrics', ours],
  [/\/dist\/api\/identify\.js|\/dist\/store\/key-cache\.js/, 'identifying the key (hash, cache)', ours],
  [/\/dist\/api\/rate-limit\.js|\/dist\/limits\//, 'the rate limit (policy, leases, bans, headers)', ours],
  [/openapi\.response\.validator|modded\.express\.mung/, 'express-openapi-validator, responses'],
  [/\/express-openapi-validator\/|\/ajv\//, 'express-openapi-validator, requests'],
  [/\/dist\/api\/pets\/cursor\.js/, 'the cursor', ours],
  [
    /\/dist\/store\/|\/better-sqlite3\/|\/pg\/|\/pg-pool\/|\/pg-protocol\/|\/ioredis\//,
    'the store (queries, rows)',
  ],
  [/\/dist\/api\/pets\/routes\.js/, 'the pets route besides the store'],
  [
    /express\/lib\/response\.js |node:_http_outgoing|node:net |node:internal\/stream_base_commons|node:internal\/streams\/writable| writev$/,
    'writing the answer (res.json, the socket)',
  ],
  [/\/dist\/(http|api|admin)\/|\/dist\/server\.js/, 'our other middleware and the chain', ours],
  [
    /\/express\/|\/router\/|\/body-parser\/|\/qs\/|node:querystring|\/forwarded\/|\/proxy-addr\//,
    'Express, its router, the query',
  ],
  [/node:_http_(server|common|incoming)/, "Node's HTTP parse"],
  [/^ \(garbage collector\)$/, 'the garbage collector'],
];

/** The names of our own layers (serverLayers' `ours`), each held to `layerBudgetUs`. */
export const ourLayers = serverLayers.filter(([, , own]) => own).map(([, name]) => name);
export const layerBudgetUs = 5;

/**
 * The layers of a profile in CPU µs a request (`busyUs`: its busy time in each, over the `served` requests of
 * every measured run), the slowest first, our own with their budget; undefined when nothing was served.
 */
export function layersPerRequest(busyUs: Map<string, number>, served: number) {
  if (served === 0) return undefined;
  return [...busyUs]
    .map(([layer, us]) => ({
      layer,
      usPerRequest: us / served,
      ...(ourLayers.includes(layer) && { budgetUs: layerBudgetUs }),
    }))
    .sort((a, b) => b.usPerRequest - a.usPerRequest);
}

/**
 * The layer of the server (serverLayers) a profile node's time counts for: the innermost on its stack, since
 * a middleware calls the next and the outer ones hold everything after them; `other` for a stack of none.
 * Worked out once per node, from its own frame or else its parent's layer.
 */
function layers(profile: Profile, frames: Map<number, CallFrame>): (id: number) => string {
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const known = new Map<number, string>();
  const layerOf = (id: number): string => {
    let layer = known.get(id);
    if (layer === undefined) {
      const frame = frames.get(id);
      const where = frame ? `${frame.url} ${frame.functionName}` : '';
      const parent = parents.get(id);
      layer =
        serverLayers.find(([pattern]) => pattern.test(where))?.[1] ??
        (parent === undefined ? 'other' : layerOf(parent));
      known.set(id, layer);
    }
    return layer;
  };
  return layerOf;
}

/**
 * Writes `<profile>.summary.txt`; returns its path and, for a profile of the server, each layer's busy time
 * in µs (start-up apart), which a run divides by the requests the process served.
 */
export function summarise(
  path: string,
  root: string,
  top = 25,
): { file: string; layerUs: Map<string, number> | undefined } {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const byOwner = new Map<string, number>();
  const byFunction = new Map<string, number>();
  // By layer of the server, the start-up apart: those shares are of the time spent serving.
  const layerOf = layers(profile, frames);
  const byLayer = new Map<string, number>();
  let startUpTime = 0;
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const frame = frames.get(id);
    const time = profile.timeDeltas[i] ?? 0;
    if (!frame || frame.functionName === '(idle)') return;
    busy += time;
    const who = owner(frame, root);
    byOwner.set(who, (byOwner.get(who) ?? 0) + time);
    const what = `${frame.functionName || '(anonymous)'} ${who}:${frame.lineNumber + 1}`;
    byFunction.set(what, (byFunction.get(what) ?? 0) + time);
    const layer = layerOf(id);
    if (layer === startUp) startUpTime += time;
    else byLayer.set(layer, (byLayer.get(layer) ?? 0) + time);
  });
  const table = (title: string, rows: Map<string, number>, of = busy) => [
    title,
    ...[...rows]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, time]) => `${((100 * time) / of).toFixed(1).padStart(5)} %  ${name}`),
  ];
  // A profile of another program (a contestant) has no layer of the server: no table then.
  const ofServer = [...byLayer.keys()].some((name) => name !== 'other');
  const out = `${path}.summary.txt`;
  const lines = [
    `busy ${(busy / 1e6).toFixed(1)} s of profile (self time, idle left out)`,
    '',
    ...table('by package or file', byOwner),
    '',
    ...table('by function', byFunction),
    ...(ofServer
      ? [
          '',
          ...table(
            `by layer of the server (the innermost on each stack; start-up apart, ${(startUpTime / 1e6).toFixed(1)} s)`,
            byLayer,
            busy - startUpTime,
          ),
        ]
      : []),
  ];
  writeFileSync(out, `${lines.join('\n')}\n`);
  return { file: out, layerUs: ofServer ? byLayer : undefined };
}
