// A text summary of a V8 CPU profile (`--cpu-prof`), written beside it: where the busy time went, by
// package (or our own file) and by function. Idle time is left out, so the shares are of the time the
// server was working. Written by hand: docs/decisions.md#profile-summary.
import { readFileSync, writeFileSync } from 'node:fs';

type CallFrame = { functionName: string; url: string; lineNumber: number };
type Profile = {
  nodes: { id: number; callFrame: CallFrame }[];
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

/** Writes `<profile>.summary.txt` and returns its path. */
export function summarise(path: string, root: string, top = 25): string {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const byOwner = new Map<string, number>();
  const byFunction = new Map<string, number>();
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
  });
  const table = (title: string, rows: Map<string, number>) => [
    title,
    ...[...rows]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, time]) => `${((100 * time) / busy).toFixed(1).padStart(5)} %  ${name}`),
  ];
  const out = `${path}.summary.txt`;
  const lines = [
    `busy ${(busy / 1e6).toFixed(1)} s of profile (self time, idle left out)`,
    '',
    ...table('by package or file', byOwner),
    '',
    ...table('by function', byFunction),
  ];
  writeFileSync(out, `${lines.join('\n')}\n`);
  return out;
}
