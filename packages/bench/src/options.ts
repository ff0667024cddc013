// `pnpm bench`'s options, as parsed from its command line (command-line.ts: --help, a bad option), and
// checked.
import { commitOf, earlierServer } from './against.js';
import { commandLine } from './command-line.js';

const usage = `Usage: pnpm bench [options]

  --duration <s>        seconds each contestant is driven, per round (default 10)
  --connections <n>     autocannon connections (default 10)
  --rounds <n>          rounds of every contestant in turn; figures are medians (default 1)
  --scenario <text>     keep the scenarios whose name contains it (repeatable; 'refusal': the cost of a
                        429 against a 200's)
  --backend <engine>    postgres or postgres+redis, measured beside SQLite (repeatable)
  --profile             run the server (and the --against one) under --cpu-prof, with a summary beside each
  --against <ref>       also the server of an earlier commit (a release, as 2.0.0, or any git ref), built
                        in a temporary folder, in the same rounds; prints this tree / that one
  --release-note <file> with --against: write the --against table as a changeset of the server at <file>
                        (e.g. .changeset/performance.md), naming each scenario below 0.97 × that ref: the
                        release's regression gate (docs/releasing.md)
  -h, --help            this text

Results: the tables printed, and bench-results/<timestamp>.json. What each figure means: docs/performance.md.
`;

function refuse(message: string): never {
  process.stderr.write(`pnpm bench: ${message}\n`);
  process.exit(2);
}

/** The bench's options; --against's commit is built here, before anything is started. */
export function benchOptions() {
  const values = commandLine('pnpm bench', usage, {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '1' },
    profile: { type: 'boolean', default: false },
    backend: { type: 'string', multiple: true, default: [] },
    scenario: { type: 'string', multiple: true, default: [] },
    against: { type: 'string' },
    'release-note': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  });
  const against = values.against;
  let againstCommit: ReturnType<typeof commitOf> | undefined;
  let earlier: ReturnType<typeof earlierServer> | undefined;
  try {
    againstCommit = against === undefined ? undefined : commitOf(against);
    earlier = againstCommit && earlierServer(against as string, againstCommit);
  } catch (error) {
    refuse((error as Error).message);
  }
  const releaseNote = values['release-note'];
  if (releaseNote !== undefined && against === undefined)
    refuse('--release-note needs --against <the last release>: the note compares this tree with it');
  const backends = values.backend as string[];
  for (const b of backends)
    if (!['postgres', 'postgres+redis'].includes(b))
      throw new Error(`--backend ${b}: postgres or postgres+redis`);
  /** Rounds of every contestant in turn; each figure reported is the median of its rounds. */
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`--rounds ${values.rounds}: a whole number ≥ 1`);
  return {
    against,
    againstCommit,
    earlier,
    releaseNote,
    backends,
    only: values.scenario as string[],
    duration: Number(values.duration),
    connections: Number(values.connections),
    rounds,
    profile: values.profile === true,
  };
}
