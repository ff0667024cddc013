// The performance goals, judged from one bench run's report (run.ts): their one home. `pnpm bench` prints
// the table at the end of every run and writes it into the JSON, and docs/performance.md quotes a run's
// table as printed. Beside each figure, the machine's load while it was measured: the cores other processes
// kept busy (neither the contestant nor the load generator) and the cores the hypervisor stole, the larger of
// the runs the figure was made from. A figure made on a busy box says so.

/** The part of a contestant's measure a goal reads. */
export type Measured = {
  reqPerSec: number;
  cpuUsPerRequest: number;
  coresBusy: { others?: number; steal?: number };
};
/** The part of the bench's report the goals read (run.ts writes it as JSON). */
export type Report = {
  rows: {
    scenario: string;
    measured: Record<string, Measured>;
    againstRatio?: { reqPerSec: number };
  }[];
  refusals?: { target: string; answered: Measured; refused: Measured }[];
  against?: { ref: string };
  coldStartMs: { server: number };
  peakRssUnderListLoadMb: number;
  /** --profile: the server's layers in CPU µs a request, our own with their budget. */
  layers?: { layer: string; usPerRequest: number; budgetUs?: number }[];
};
export type Judged = {
  goal: string;
  measured: string;
  load: string;
  status: 'met' | 'missed' | 'not measured';
};

const listScenario = 'GET /v1/pets?limit=20';
const fixed = (n: number, digits = 2) => n.toFixed(digits);
/** The box's load over the given measures: the most other processes and the hypervisor took. */
export const loadOf = (measures: Measured[]): string => {
  if (measures.length === 0) return '–';
  const most = (pick: (m: Measured) => number | undefined) =>
    Math.max(0, ...measures.map((m) => pick(m) ?? 0));
  return `others ${fixed(most((m) => m.coresBusy.others))}, steal ${fixed(most((m) => m.coresBusy.steal))} cores`;
};
const status = (met: boolean): Judged['status'] => (met ? 'met' : 'missed');
const notMeasured = (goal: string, why: string): Judged => ({
  goal,
  measured: why,
  load: '–',
  status: 'not measured',
});

/** The short list against bare Express and the usual Express stack. */
function listGoals(report: Report): Judged[] {
  const judged: Judged[] = [];
  const list = report.rows.find((row) => row.scenario === listScenario)?.measured;
  const server = list?.server;
  const bare = list?.['bare-express'];
  const usual = list?.['usual Express'];
  if (server && bare) {
    const throughput = server.reqPerSec / bare.reqPerSec;
    const cpu = bare.cpuUsPerRequest / server.cpuUsPerRequest;
    // Beside it, bare Express with the contract's validation alone, which the goal keeps: the most the full
    // server could reach were everything else of it free.
    const validated = list?.['validated Express'];
    judged.push({
      goal: 'short list ≥ 0.85 × bare Express (throughput and CPU per request)',
      measured:
        `${fixed(throughput)} throughput, ${fixed(cpu)} CPU` +
        (validated
          ? ` (validation alone: ${fixed(validated.reqPerSec / bare.reqPerSec)}, ${fixed(bare.cpuUsPerRequest / validated.cpuUsPerRequest)})`
          : ''),
      load: loadOf(validated ? [server, bare, validated] : [server, bare]),
      status: status(throughput >= 0.85 && cpu >= 0.85),
    });
    judged.push({
      goal: 'CPU per short list ≤ 300 µs',
      measured: `${fixed(server.cpuUsPerRequest, 0)} µs`,
      load: loadOf([server]),
      status: status(server.cpuUsPerRequest <= 300),
    });
  } else judged.push(notMeasured('short list ≥ 0.85 × bare Express', `no ${listScenario} in this run`));
  if (server && usual) {
    const ratio = server.reqPerSec / usual.reqPerSec;
    judged.push({
      goal: 'short list ≥ 1.5 × the usual Express stack',
      measured: fixed(ratio),
      load: loadOf([server, usual]),
      status: status(ratio >= 1.5),
    });
  }
  return judged;
}

/** Every scenario against bare Express: the lowest. */
function lowestScenario(report: Report): Judged[] {
  const judged: Judged[] = [];
  const againstBare = report.rows.flatMap(({ scenario, measured }) =>
    measured.server && measured['bare-express']
      ? [{ scenario, ratio: measured.server.reqPerSec / measured['bare-express'].reqPerSec, measured }]
      : [],
  );
  if (againstBare.length > 0) {
    const worst = againstBare.reduce((a, b) => (b.ratio < a.ratio ? b : a));
    judged.push({
      goal: 'no scenario below 0.7 × bare Express',
      measured: `lowest ${fixed(worst.ratio)} (${worst.scenario})`,
      load: loadOf(
        againstBare.flatMap(({ measured }) => [measured.server, measured['bare-express']] as Measured[]),
      ),
      status: status(worst.ratio >= 0.7),
    });
  }
  return judged;
}

/** A refusal's CPU against an answer's. */
function refusalGoal(report: Report): Judged[] {
  const judged: Judged[] = [];
  const refusals = report.refusals ?? [];
  if (refusals.length > 0) {
    const ratios = refusals.map((r) => ({
      target: r.target,
      ratio: r.refused.cpuUsPerRequest / r.answered.cpuUsPerRequest,
    }));
    judged.push({
      goal: "a 429 costs no more CPU than a 200 (this tree's servers)",
      measured: ratios.map((r) => `${r.target} ${fixed(r.ratio)}`).join(', '),
      load: loadOf(refusals.flatMap((r) => [r.answered, r.refused])),
      // The --against server is shown beside them, and judged by nothing here.
      status: status(ratios.every((r) => r.target === report.against?.ref || r.ratio <= 1)),
    });
  } else judged.push(notMeasured('a 429 costs no more CPU than a 200', 'no refusal in this run'));
  return judged;
}

/** Every scenario against the release named by --against: the lowest. */
function againstGoal(report: Report): Judged[] {
  const judged: Judged[] = [];
  if (report.against) {
    const ref = report.against.ref;
    const rows = report.rows.filter((row) => row.againstRatio);
    const worst = rows.reduce<(typeof rows)[number] | undefined>(
      (a, b) => (!a || (b.againstRatio?.reqPerSec ?? 1) < (a.againstRatio?.reqPerSec ?? 1) ? b : a),
      undefined,
    );
    if (worst?.againstRatio) {
      judged.push({
        goal: `no scenario more than 5 % slower than ${ref}`,
        measured: `lowest ${fixed(worst.againstRatio.reqPerSec)} (${worst.scenario})`,
        load: loadOf(rows.flatMap((row) => [row.measured.server, row.measured[ref]] as Measured[])),
        status: status(worst.againstRatio.reqPerSec >= 0.95),
      });
    }
  } else
    judged.push(notMeasured('no scenario more than 5 % slower than a release', 'no --against in this run'));
  return judged;
}

/** Memory under load and the cold start. */
function resourceGoals(report: Report): Judged[] {
  const judged: Judged[] = [];
  if (report.peakRssUnderListLoadMb > 0) {
    judged.push({
      goal: 'peak RSS under the list load ≤ 150 MB',
      measured: `${fixed(report.peakRssUnderListLoadMb, 1)} MB`,
      load: '–',
      status: status(report.peakRssUnderListLoadMb <= 150),
    });
  }
  judged.push({
    goal: 'cold start to the first 200 ≤ 1.0 s',
    measured: `${fixed(report.coldStartMs.server / 1000)} s`,
    load: '–',
    status: status(report.coldStartMs.server <= 1000),
  });
  return judged;
}

/** Our layers of the server (--profile) within their budget. */
function layerGoal(report: Report): Judged[] {
  const goal = 'each of our layers ≤ its budget of CPU µs a request (--profile)';
  const ours = (report.layers ?? []).filter((l) => l.budgetUs !== undefined);
  if (ours.length === 0) return [notMeasured(goal, 'no --profile in this run')];
  const over = ours.filter((l) => l.usPerRequest > (l.budgetUs as number));
  return [
    {
      goal,
      measured:
        over.length === 0
          ? `highest ${fixed(Math.max(...ours.map((l) => l.usPerRequest)), 1)} µs`
          : over.map((l) => `${l.layer} ${fixed(l.usPerRequest, 1)} µs`).join(', '),
      load: '–',
      status: status(over.length === 0),
    },
  ];
}

/** Every goal, judged from `report`; a goal whose contestants were not in the run is `not measured`. */
export const judge = (report: Report): Judged[] => [
  ...listGoals(report),
  ...lowestScenario(report),
  ...refusalGoal(report),
  ...againstGoal(report),
  ...resourceGoals(report),
  ...layerGoal(report),
];

/** The judged goals as the Markdown table the bench prints and docs/performance.md quotes. */
export function goalTable(judged: Judged[]): string[] {
  return [
    '| goal | measured | box load while measured | status |',
    '|---|---|---|---|',
    ...judged.map((j) => `| ${j.goal} | ${j.measured} | ${j.load} | ${j.status} |`),
  ];
}
